"""Run by the openreward venv's Python (openreward 0.1.167; no mcpgym there): play an mcpgym
server over the ORS wire with openreward's own client and print what it saw as JSON.

Usage: python openreward_driver.py < spec.json, where spec is
`{"url", "env", "variant", "split", "plays": [{"index", "actions": [[tool, args], ...]}]}`.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
from typing import Any


def _blocks(blocks: Any) -> list[dict[str, Any]]:
    return [dataclasses.asdict(b) for b in blocks]


def main() -> None:
    spec = json.load(sys.stdin)
    os.environ["OPENREWARD_DISABLE_UPDATE_CHECK"] = "1"  # no network beyond the server
    os.environ["OPENREWARD_SESSION_URL"] = spec["url"]
    os.environ["OPENREWARD_API_URL"] = spec["url"]
    from openreward import OpenReward, ScoreGroupUnsupported
    from openreward.api.errors import ToolCallError

    out: dict[str, Any] = {"plays": []}
    with OpenReward(api_key=spec.get("api_key", ""), base_url=spec["url"]) as client:
        env = client.environments.get(spec["env"], variant=spec.get("variant"))
        split = spec["split"]
        out["splits"] = env.list_splits()
        tasks = env.list_tasks(split)
        out["num_tasks"] = env.num_tasks(split)
        out["tasks"] = [t.task_spec for t in tasks]
        out["env_names"] = sorted({t.environment_name for t in tasks})
        out["task_1"] = env.get_task(split, 1).task_spec
        out["range"] = [t.task_spec for t in env.get_task_range(split, 0, 3)]
        out["class_tools"] = sorted(t.name for t in env.list_tools())
        out["terminal_tool"] = env.terminal_tool()
        out["supports_score_group"] = env.supports_score_group()
        for play in spec["plays"]:
            seen: dict[str, Any] = {"steps": []}
            with env.session(task=tasks[play["index"]]) as session:
                seen["version"] = session.version()
                seen["prompt"] = _blocks(session.get_prompt())
                seen["messages"] = [
                    {"role": m.role, "blocks": _blocks(m.blocks)} for m in session.get_messages()
                ]
                seen["tools"] = sorted(t.name for t in session.list_tools())
                seen["final_by_message"] = session.is_assistant_message_final()
                try:
                    session.score_group([])
                    seen["score_group"] = "supported"
                except ScoreGroupUnsupported:
                    seen["score_group"] = "unsupported"
                for name, args in play["actions"]:
                    try:
                        res = session.call_tool(name, args)
                    except ToolCallError as exc:
                        seen["steps"].append({"refused": exc.reason})
                        continue
                    seen["steps"].append(
                        {
                            "reward": res.reward,
                            "finished": res.finished,
                            "metadata": res.metadata,
                            "blocks": _blocks(res.blocks),
                        }
                    )
            out["plays"].append(seen)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
