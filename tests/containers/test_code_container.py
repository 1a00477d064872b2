"""Code Gym as a container (`mcpgym build` of `code_gym:CodeEnv`) under the DockerProvider's
hardening: its bubblewrap sandbox cannot start there (the engine's default seccomp profile
forbids new namespaces to an unprivileged process, and the base image has no bwrap), so the
episode starts and every tool answers the structured SANDBOX_UNAVAILABLE — no code runs
unsandboxed (docs/code_gym.md, "In a container")."""

from __future__ import annotations

import pytest

from container_engines import Engine
from mcpgym.client import EnvClient

pytestmark = pytest.mark.timeout(900)
CODE = "code_gym:CodeEnv"


async def test_code_gym_image_refuses_to_run_code_unsandboxed(engine: Engine) -> None:
    image = engine.image(CODE, extras=("code",))
    async with engine.provider(image) as provider:
        handle = await provider.start()
        container = engine.client.containers.get(handle.id)
        if engine.name == "docker":  # its default seccomp profile: no namespace for the server
            code, out = container.exec_run(["unshare", "--user", "--map-root-user", "true"])
            assert code != 0 and b"Operation not permitted" in bytes(out), out
        env = EnvClient(handle.base_url)
        try:
            meta = (await env.reset(task_id="HumanEval/53")).observation.metadata
            assert meta["task"] == "HumanEval/53" and "def add" in meta["prompt"]
            assert "bubblewrap" in meta["sandbox_unavailable"]
            calls = [
                ("write_file", {"path": "solution.py", "content": "def add(x, y): return x + y"}),
                ("run_python", {"code": "open('/tmp/ran', 'w').write('unsandboxed')"}),
                ("submit", {}),
            ]
            for name, args in calls:
                obs = await env.call_tool(name, **args)
                assert obs.error is not None, (name, obs)
                err = obs.error.model_dump()["error"]
                assert (err["code"], err["tool"]) == ("SANDBOX_UNAVAILABLE", name)
                assert "bubblewrap" in err["message"]
                assert not obs.done and not obs.reward
            code, _ = container.exec_run(["test", "-e", "/tmp/ran"])
            assert code != 0  # the snippet never ran, in the sandbox or out of it
            state = (await env.state()).model_dump()
            assert state["submitted"] is False and state["calls"] == 0
        finally:
            await env.close()
