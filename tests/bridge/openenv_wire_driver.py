"""Run by the *openenv* venv's Python (imports no mcpgym): OpenEnv's own clients play one scripted
episode against URL and print what each client read, as JSON, for the test to compare with the
same script against OpenEnv's own server.

Usage: python openenv_wire_driver.py URL SCRIPT_JSON

SCRIPT: `{"reset": {...}, "steps": [action, ...], "typed": "MODULE:CLIENT"|null,
"typed_action": "MODULE:ACTION"|null, "tools": [[name, arguments], ...]|null}`.
- `generic`: `GenericEnvClient` resets with `reset`, steps each raw action, reads `state`;
- `typed`: the environment's own `EnvClient` subclass does the same with its action class;
- `mcp`: `MCPToolClient` (OpenEnv's default, production dialect) resets, lists the tools, calls
  each `tools` entry (a raised error is recorded as `{"raised": message}`).
"""

import importlib
import json
import sys
from typing import Any


def _load(spec: str) -> Any:
    module, _, attr = spec.partition(":")
    return getattr(importlib.import_module(module), attr)


def _result(r: Any) -> dict[str, Any]:
    obs = r.observation
    dumped = obs if isinstance(obs, dict) else obs.model_dump(mode="json")
    metadata = getattr(r, "metadata", None)  # openenv-core 0.3.0's StepResult has none
    return {"observation": dumped, "reward": r.reward, "done": r.done, "metadata": metadata}


def _state(s: Any) -> Any:
    return s if isinstance(s, dict) else s.model_dump(mode="json")


def _play(client: Any, script: dict[str, Any], make: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"steps": []}
    with client.sync() as env:
        out["reset"] = _result(env.reset(**script.get("reset", {})))
        for action in script.get("steps", []):
            try:
                out["steps"].append(_result(env.step(make(action))))
            except Exception as exc:  # the server's error, as the client raises it
                out["steps"].append({"raised": type(exc).__name__})
        out["state"] = _state(env.state())
    return out


def main() -> int:
    from openenv.core.generic_client import GenericEnvClient
    from openenv.core.mcp_client import MCPToolClient

    url, script = sys.argv[1], json.loads(sys.argv[2])
    slow = {"connect_timeout_s": 300.0, "message_timeout_s": 300.0}  # a loaded CI machine
    out: dict[str, Any] = {"generic": _play(GenericEnvClient(base_url=url, **slow), script, dict)}
    if script.get("typed"):
        action_cls = _load(script["typed_action"])
        typed = _load(script["typed"])(base_url=url, **slow)
        out["typed"] = _play(typed, script, action_cls.model_validate)
    if script.get("tools") is not None:
        mcp: dict[str, Any] = {"calls": []}
        with MCPToolClient(base_url=url, **slow).sync() as env:
            env.reset(**script.get("reset", {}))
            mcp["tools"] = sorted(t.name for t in env.list_tools())
            for name, arguments in script["tools"]:
                try:
                    mcp["calls"].append(env.call_tool(name, **arguments))
                except Exception as exc:  # OpenEnv's client raises a failed tool
                    mcp["calls"].append({"raised": type(exc).__name__})
        out["mcp"] = mcp
    print(json.dumps(out, sort_keys=True, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
