"""What each CLI adapter makes of its program's output, on lines recorded from the real CLIs
(`fixtures/<harness>_note.json`: one turn that calls `note` once, then answers "Noted.");
plus the configuration each adapter writes. No npm needed."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path
from typing import Any

import pytest

from mcpgym.harness.adapters import (
    ADAPTERS,
    ErrorEvent,
    McpServer,
    ModelEndpoint,
    TextEvent,
    ToolCallEvent,
    ToolResultEvent,
    TurnComplete,
    make_adapter,
)
from mcpgym.harness.adapters.claude_code import claude_mcp_config
from mcpgym.harness.adapters.codex import codex_config
from mcpgym.harness.adapters.opencode import opencode_config

FIXTURES = Path(__file__).parent / "fixtures"
MCP = McpServer("env", url="http://127.0.0.1:9/mcp", headers={"Authorization": "Bearer tok"})
MODEL = ModelEndpoint("http://127.0.0.1:8", "episode-key", "m-1")


def parsed(harness: str) -> list[Any]:
    adapter = make_adapter(harness)
    lines = json.loads((FIXTURES / f"{harness}_note.json").read_text())
    return [event for obj in lines for event in adapter._parse(obj)]  # type: ignore[attr-defined]


@pytest.mark.parametrize("harness", ["claude-code", "codex", "opencode"])
def test_a_recorded_turn_becomes_events(harness: str) -> None:
    events = [e for e in parsed(harness) if not isinstance(e, ErrorEvent)]
    name = ADAPTERS[harness].capabilities.tool_name("env", "note")
    calls = [e for e in events if isinstance(e, ToolCallEvent)]
    results = [e for e in events if isinstance(e, ToolResultEvent)]
    texts = [e.text for e in events if isinstance(e, TextEvent)]
    assert [(c.name, c.arguments) for c in calls] == [(name, {"text": "hi"})]
    assert [(r.name, r.is_error, r.id) for r in results] == [(name, False, calls[0].id)]
    assert json.loads(json.dumps(results[0].content)) in (
        {"notes": 1, "seed": None},
        '{"notes":1,"seed":null}',
        '{"notes": 1, "seed": null}',
    )
    assert texts == ["Noted."]


def test_claude_codes_result_line_ends_the_turn() -> None:
    (done,) = [e for e in parsed("claude-code") if isinstance(e, TurnComplete)]
    assert done.response == "Noted." and done.session_id


def test_codex_reports_its_model_metadata_warning_as_an_error_event() -> None:
    errors = [e.message for e in parsed("codex") if isinstance(e, ErrorEvent)]
    assert len(errors) == 1 and "Model metadata" in errors[0]


@pytest.mark.parametrize("harness", ["codex", "opencode"])
def test_per_turn_clis_learn_their_session_from_the_output(harness: str) -> None:
    adapter = make_adapter(harness)
    for obj in json.loads((FIXTURES / f"{harness}_note.json").read_text()):
        adapter._parse(obj)  # type: ignore[attr-defined]
    assert adapter.session_id  # type: ignore[attr-defined]
    argv = adapter._argv("next", 2)  # type: ignore[attr-defined]
    assert adapter.session_id in argv  # type: ignore[attr-defined]


def test_claude_code_gets_the_server_with_its_header() -> None:
    assert claude_mcp_config(MCP) == {
        "mcpServers": {
            "env": {
                "type": "http",
                "url": "http://127.0.0.1:9/mcp",
                "headers": {"Authorization": "Bearer tok"},
            }
        }
    }
    stdio = McpServer("env", command=("python", "-m", "relay"), env={"T": "1"})
    assert claude_mcp_config(stdio)["mcpServers"]["env"] == {
        "type": "stdio",
        "command": "python",
        "args": ["-m", "relay"],
        "env": {"T": "1"},
    }


def test_codex_config_is_valid_toml_with_provider_and_server() -> None:
    config = tomllib.loads(codex_config(MCP, MODEL, 30.0))
    assert config["model"] == "m-1" and config["model_provider"] == "mcpgym"
    provider = config["model_providers"]["mcpgym"]
    assert (provider["base_url"], provider["wire_api"]) == ("http://127.0.0.1:8/v1", "responses")
    server = config["mcp_servers"]["env"]
    assert server["url"] == "http://127.0.0.1:9/mcp"
    assert server["bearer_token_env_var"] == "MCPGYM_MCP_TOKEN"
    assert (server["required"], server["default_tools_approval_mode"]) == (True, "approve")


def test_opencode_config_names_the_provider_and_drops_builtin_tools() -> None:
    config = opencode_config(MCP, MODEL, builtin_tools=False)
    assert config["model"] == "mcpgym/m-1"
    options = config["provider"]["mcpgym"]["options"]
    assert options == {"baseURL": "http://127.0.0.1:8/v1", "apiKey": "episode-key"}
    assert config["mcp"]["env"]["headers"] == {"Authorization": "Bearer tok"}
    assert config["tools"]["bash"] is False


def test_make_adapter_knows_every_harness_and_refuses_others() -> None:
    assert sorted(ADAPTERS) == ["claude-code", "cli", "codex", "opencode", "python"]
    assert make_adapter("cli", command=["x"]).capabilities.process == "persistent"
    assert make_adapter("cli", command=["x"], one_shot=True).capabilities.process == "per_turn"
    with pytest.raises(ValueError, match="unknown harness"):
        make_adapter("nope")
