"""Run by the *openenv* virtual environment's Python, not mcpgym's: drives a server with the
released openenv package's own generic client and prints one JSON line per operation.

Usage: python openenv_driver.py URL ACTIONS_JSON RESET_JSON
Exit 0 on success, 1 on any client, server or protocol failure.
"""

import json
import sys


def main() -> int:
    url, actions, reset = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
    from openenv.core import GenericEnvClient

    out = sys.stdout
    op = "connect"
    try:
        with GenericEnvClient(
            base_url=url, message_timeout_s=30, connect_timeout_s=30
        ).sync() as env:
            op = "reset"
            r = env.reset(**reset)
            out.write(
                json.dumps(
                    {"op": op, "observation": r.observation, "reward": r.reward, "done": r.done}
                )
                + "\n"
            )
            for i, action in enumerate(actions):
                op = f"step{i}"
                r = env.step(action)
                row = {
                    "op": "step",
                    "observation": r.observation,
                    "reward": r.reward,
                    "done": r.done,
                }
                out.write(json.dumps(row) + "\n")
            op = "state"
            out.write(json.dumps({"op": op, "state": env.state()}) + "\n")
    except Exception as exc:
        out.write(json.dumps({"op": op, "error": f"{type(exc).__name__}: {exc}"}) + "\n")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
