"""A scripted model for driving real agent CLIs in tests, through `mcpgym.harness.capture`.

    from scripted_model import ScriptedModel, call, say
    from scripted_model.server import scripted_proxy

    model = ScriptedModel([call("guess", {"n": 50}), say("The number is 50.")])
    async with scripted_proxy(model) as proxy:
        key = proxy.new_episode_key()
        ...  # run the CLI with base URL proxy.base_url / proxy.openai_base_url and API key `key`
        first, second = model.requests(key)   # the second request holds the first turn

See docs/capture.md for each CLI's environment and configuration.
"""

from scripted_model.script import (
    Picker,
    Say,
    ScriptedModel,
    Step,
    StepContext,
    ToolCall,
    call,
    pick_tool,
    say,
)
from scripted_model.turn import Call, Turn

__all__ = [
    "Call",
    "Picker",
    "Say",
    "ScriptedModel",
    "Step",
    "StepContext",
    "ToolCall",
    "Turn",
    "call",
    "pick_tool",
    "say",
]
