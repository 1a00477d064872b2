"""What a sandboxed program leaves for the host to read cannot crash, stall or balloon it, and
cannot buy reward (found by an attacking review, 2026-12-03; each fails without its fix):

- a tree 1,500 folders deep (`os.fwalk` and `shutil.rmtree` recurse: `RecursionError` in every
  file tool, `submit`, the step limit and the next reset);
- a file name that is not UTF-8 (its surrogate escape made the reply unencodable: a 500);
- 2,000 look-alike long names, then a missing one (difflib over all of them: seconds on the loop);
- long nested paths (the listing was built whole: ~900 MB for one call);
- a report or answer line nested 50,000 deep (`RecursionError` where `ValueError` was caught);
- rewriting the visible tests in `shaped` mode (0.1 paid for a submission the hidden tests fail).
"""

from __future__ import annotations

import json
import time

import pytest

from code_gym import CodeEnv
from code_gym.sandbox.files import MAX_PATH_CHARS
from helpers.code import step

pytestmark = pytest.mark.code


def ran(env: CodeEnv, code: str) -> None:
    obs = step(env, "run_python", code=code)
    assert obs.error is None and obs.result["ok"], (obs.error, obs.result)  # type: ignore[attr-defined]


def test_a_very_deep_tree_breaks_no_tool_nor_the_reset(env: CodeEnv) -> None:
    env.reset(task_id="HumanEval/0")
    ran(env, "import os\nos.chdir('/workspace')\nfor _ in range(1500):\n"
             "    os.mkdir('d'); os.chdir('d')\nopen('deep.py', 'w').write('x')\n")  # fmt: skip
    for tool, args in [("list_files", {}), ("read_file", {"path": "solution.py"}),
                       ("write_file", {"path": "a.py", "content": "A = 1\n"})]:  # fmt: skip
        obs = step(env, tool, **args)
        assert obs.error is None, (tool, obs.error)  # type: ignore[attr-defined]
    obs = step(env, "submit")
    assert obs.done and obs.error is None, obs  # type: ignore[attr-defined]
    env.reset(task_id="HumanEval/1")
    assert step(env, "list_files").result["files"] == ["solution.py", "test_solution.py"]  # type: ignore[attr-defined]


def test_names_that_are_not_utf8_are_not_listed(env: CodeEnv) -> None:
    env.reset()
    ran(env, "open(b'/workspace/bad\\xff.py', 'wb').write(b'x')\nopen('/workspace/ok.py', 'w')")
    obs = step(env, "list_files")
    assert obs.result == {"files": ["ok.py"]}, obs  # type: ignore[attr-defined]
    obs.model_dump_json()  # the reply can be written


def test_a_missing_name_among_many_look_alikes_is_answered_quickly(env: CodeEnv) -> None:
    env.reset()
    ran(env, "import random\nrandom.seed(1)\nfor i in range(2000):\n"
             "    n = ''.join(random.choice('ab') for _ in range(190))\n"
             "    open(f'/workspace/{n}{i}.py', 'w').close()\n")  # fmt: skip
    missing = "ab" * 95 + "x.py"
    for tool, args in [("read_file", {"path": missing}), ("run_python", {"file": missing})]:
        t0 = time.perf_counter()
        obs = step(env, tool, **args)
        assert obs.error is not None  # type: ignore[attr-defined]
        assert time.perf_counter() - t0 < 1.0, tool


def test_a_listing_of_long_nested_paths_stays_small(env: CodeEnv) -> None:
    env.reset()
    ran(env, "import os\nos.chdir('/workspace')\nfor _ in range(40):\n"
             "    os.mkdir('p' * 250); os.chdir('p' * 250)\n"
             "for i in range(500):\n    open(f'f{i}.py', 'w').close()\n"
             "open('/workspace/top.py', 'w')\n")  # fmt: skip
    files = step(env, "list_files").result["files"]  # type: ignore[attr-defined]
    assert "top.py" in files and all(len(f) <= MAX_PATH_CHARS for f in files)
    assert len(json.dumps(files)) < 1_000_000


def test_a_deeply_nested_report_line_is_only_output(env: CodeEnv) -> None:
    env.reset()
    code = 'import sys; sys.stderr.write("\\x1e" + "[" * 50000 + "\\n"); sys.exit(1)'
    obs = step(env, "run_python", code=code)
    assert obs.error is None and obs.result["exit_code"] == 1, obs  # type: ignore[attr-defined]


def test_a_deeply_nested_answer_line_is_no_answer(env: CodeEnv) -> None:
    env.reset(task_id="HumanEval/0")
    bomb = ("import os\nfor fd in range(3, 10):\n    try:\n"
            "        os.write(fd, b'[' * 200000 + b'\\n')\n    except OSError:\n        pass\n"
            "def has_close_elements(numbers, threshold):\n    return False\n")  # fmt: skip
    step(env, "write_file", path="solution.py", content=bomb)
    obs = step(env, "submit")
    assert obs.error is None and obs.done and obs.reward == 0.0, obs  # type: ignore[attr-defined]
    assert env.state.submitted


def test_rewritten_visible_tests_earn_no_shaped_reward(env: CodeEnv) -> None:
    env.reset(task_id="HumanEval/0", reward="shaped")
    total = 0.0
    for tool, args in [("write_file", {"path": "test_solution.py",
                                       "content": "def test_ok():\n    pass\n"}),
                       ("run_tests", {}), ("submit", {})]:  # fmt: skip
        obs = step(env, tool, **args)
        total += obs.reward or 0.0
    assert obs.done and total == pytest.approx(0.0), total


def test_a_lone_surrogate_in_content_is_a_structured_error(env: CodeEnv) -> None:
    env.reset()
    obs = step(env, "write_file", path="a.py", content="x = '\ud800'\n")
    assert obs.error is not None and obs.error.model_dump()["error"]["code"] == "INVALID_ARGUMENTS"  # type: ignore[attr-defined]
