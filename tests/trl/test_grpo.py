"""A real TRL `GRPOTrainer` trains a tiny model through the adapter: Guess the Number with a task
set read by `datasets` from a local file, Calendar Gym with its own suite, and Code Gym (files
written and graded in its bubblewrap sandbox). Two GRPO steps on the CPU each; the model is
built and warmed up here (nothing is downloaded)."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path
from typing import Any

import pytest
from grpo_marks import GRPO_RUN

from helpers.compat import TRL_CLIENT, compat

pytestmark = [pytest.mark.trl, *GRPO_RUN]
torch = pytest.importorskip("torch")
trl = pytest.importorskip("trl")
datasets = pytest.importorskip("datasets")

from calendar_gym import CalendarEnv  # noqa: E402
from calendar_gym.tasks.taskset import CALENDAR_TASKS  # noqa: E402
from code_gym import CodeEnv  # noqa: E402
from mcpgym.examples.guess import GuessEnv  # noqa: E402
from mcpgym.integrations import trl_tiny as tiny  # noqa: E402
from mcpgym.integrations.trl import Episode, environment_factory, episode_of  # noqa: E402
from mcpgym.tasks import from_dataset  # noqa: E402


class Recorder:
    """A reward function (weight 0 in effect: it returns 0) that keeps what TRL hands it."""

    __name__ = "recorder"

    def __init__(self) -> None:
        self.rollouts: list[tuple[list[dict[str, Any]], Episode]] = []

    def __call__(self, completions: Any, environments: Any, **_: Any) -> list[float]:
        self.rollouts += [
            (c, episode_of(e)) for c, e in zip(completions, environments, strict=True)
        ]
        return [0.0] * len(completions)


def train(
    adapter: type,
    rows: list[dict[str, Any]],
    examples: list[tuple[Any, str]],
    tmp: Path,
    warm_steps: int = 60,
) -> tuple[Any, Recorder, bool]:
    """Warm a tiny model up on `examples`, then run two GRPO steps on `rows`."""
    torch.set_num_threads(1)  # a two-layer model gains nothing from threads; CI shares cores
    tools = [getattr(adapter, n) for n in sorted(vars(adapter)) if not n.startswith("_")]
    corpus = [p + tiny.as_message(**json.loads(_body(c))) for p, c in examples]
    tok = tiny.tokenizer(corpus, tools)
    net = tiny.model(tok)
    assert tiny.warm_up(net, tok, examples, tools, steps=warm_steps) < 1.0
    before = [p.detach().clone() for p in net.parameters()]
    recorder = Recorder()
    args = trl.GRPOConfig(
        output_dir=str(tmp / "out"),
        max_steps=2,
        per_device_train_batch_size=4,
        num_generations=4,
        max_completion_length=128,  # room for the tool result: TRL drops results past it
        max_tool_calling_iterations=1,
        learning_rate=1e-4,  # small: the warmed-up tool calling must survive step one
        logging_steps=1,
        report_to="none",
        save_strategy="no",
        use_cpu=True,
        disable_tqdm=True,
        seed=0,
    )
    trainer = trl.GRPOTrainer(
        model=net,
        processing_class=tok,
        args=args,
        train_dataset=datasets.Dataset.from_list(rows),
        reward_funcs=[recorder],
        environment_factory=adapter,
    )
    trainer.train()
    changed = any(not torch.equal(a, b) for a, b in zip(before, net.parameters(), strict=True))
    return trainer, recorder, changed


def _body(completion: str) -> str:
    """The first call's JSON of a completion (the tokenizer's corpus holds that one)."""
    return completion.removeprefix("<tool_call>\n").split("\n</tool_call>")[0]


def check_learned(steps: list[dict[str, Any]], changed: bool) -> None:
    """GRPO learns from a spread of rewards within a group: the weights moved exactly when some
    step's group had one (equal rewards give zero advantages, so a zero gradient)."""
    spread = any(h["frac_reward_zero_std"] < 1 for h in steps)
    assert changed is spread, f"reward spread in some step: {spread}, weights changed: {changed}"


def check_run(trainer: Any, recorder: Recorder, changed: bool) -> list[Episode]:
    """The acceptance checks shared by both environments; returns the episodes of the rollouts
    that called a tool (a rollout that answered in plain text must have run none)."""
    steps = [h for h in trainer.state.log_history if "loss" in h]
    assert len(steps) == 2
    assert all(math.isfinite(h["loss"]) for h in steps)
    assert all(h["tools/failure_frequency"] == 0 for h in steps)
    assert all(h["tools/call_frequency"] > 0 for h in steps)
    check_learned(steps, changed)
    assert len(recorder.rollouts) == 8  # 2 steps x 4 generations
    episodes = []
    for messages, episode in recorder.rollouts:
        first = messages[0]
        assert first["role"] == "assistant"
        assert episode.reward_calls == 1  # get_reward ran once for this rollout
        if not first.get("tool_calls"):  # a sampled slip: plain text, so no tool may have run
            assert episode.calls == [] and not any(m["role"] == "tool" for m in messages)
            continue
        parsed = [c["function"] for c in first["tool_calls"]]
        # the tools ran with exactly what TRL parsed out of the model's text
        assert [(p["name"], p["arguments"]) for p in parsed] == [
            (c.name, c.arguments) for c in episode.calls
        ]
        results = [m for m in messages if m["role"] == "tool"]
        assert [(m["name"], m["content"]) for m in results] == [
            (c.name, json.dumps(c.result, ensure_ascii=False)) for c in episode.calls
        ]
        episodes.append(episode)
    # the warmed-up model calls a tool nearly always; a sampled slip now and then is TRL's to log
    assert len(episodes) >= 4, f"only {len(episodes)} of 8 rollouts called a tool"
    return episodes


@compat(
    TRL_CLIENT,
    "GRPOTrainer(environment_factory=...)",
    "works",
    "two GRPO steps on Guess with tasks read by datasets from a local file: tools run "
    "with the arguments TRL parsed, finite loss, weights changed",
)
def test_guess_trains_with_a_task_file(tmp_path: Path) -> None:
    # secrets 3 and 7 (seeds 1 and 0 draw them): some sampled guesses hit, so rewards differ
    lines = [
        {"id": "g3", "low": 1, "high": 9, "seed": 1},
        {"id": "g7", "low": 1, "high": 9, "seed": 0},
    ]
    task_file = tmp_path / "tasks.jsonl"
    task_file.write_text("".join(json.dumps(r) + "\n" for r in lines), encoding="utf-8")
    tasks = from_dataset(task_file, reset_columns=["low", "high", "seed"], cache_dir=str(tmp_path))
    adapter = environment_factory(GuessEnv, tasks=tasks, exclude_tools=["hint"])
    prompt = [{"role": "user", "content": "Guess the integer between 1 and 9."}]
    rows = [{"prompt": prompt, "task_id": t, "difficulty": "easy"} for t in ("g3", "g7")]
    examples = [(prompt, tiny.tool_call("guess", {"n": n})) for n in (3, 5, 7)]
    episodes = check_run(*train(adapter, rows, examples, tmp_path))
    for episode in episodes:  # every rollout played a task of the file, chosen by its row
        line = next(r for r in lines if r["id"] == episode.row["task_id"])
        assert episode.reset_options == {k: line[k] for k in ("low", "high", "seed")}
        assert episode.task is not None and episode.task["id"] == line["id"]
    assert {e.calls[0].arguments["n"] for e in episodes} <= {3, 5, 7}


@compat(
    TRL_CLIENT,
    "GRPOTrainer(environment_factory=...)",
    "works",
    "two GRPO steps on Calendar Gym's suite with a tool subset: parsed arguments, the "
    "task's grade as reward",
)
def test_calendar_trains_on_its_suite(tmp_path: Path) -> None:
    adapter = environment_factory(CalendarEnv, tasks=CALENDAR_TASKS, tools=["finish"])
    ids = ["t4-perm-finance-write/explicit", "t4-perm-readonly-token/explicit"]
    rows = [{"task_id": i} for i in ids]  # no prompt column: reset returns the task's prompt
    examples = [
        ([{"role": "user", "content": CALENDAR_TASKS.find_task(i)["prompt"]}], call)
        for i in ids
        for call in (
            tiny.tool_call("finish", {"status": "cannot_complete", "summary": "ok"}),
            tiny.tool_call("finish", {"status": "done", "summary": "ok"}),
        )
    ]
    episodes = check_run(*train(adapter, rows, examples, tmp_path, warm_steps=400))
    for episode in episodes:
        assert episode.done and episode.metadata["task"] in {i.split("/")[0] for i in ids}
        status = episode.calls[0].arguments["status"]
        assert episode.metadata["success"] is (status == "cannot_complete")


# two HumanEval problems whose reference solutions fit on one line, and a wrong answer for each
CODE_TASKS = {
    "HumanEval/53": ("def add(x, y): return x + y", "def add(x, y): return x - y"),
    "HumanEval/23": ("def strlen(string): return len(string)", "def strlen(string): return 1"),
}


@compat(
    TRL_CLIENT,
    "GRPOTrainer(environment_factory=...)",
    "works",
    "two GRPO steps on Code Gym: files written and graded in its sandbox",
)
@pytest.mark.skipif(
    shutil.which("bwrap") is None,
    reason="Code Gym's sandbox needs bubblewrap (apt-get install -y bubblewrap; just test-code)",
)
def test_code_gym_trains_on_humaneval_tasks(tmp_path: Path) -> None:
    adapter = environment_factory(
        CodeEnv,
        tasks=CodeEnv.task_set,
        reset_columns=("task_id", "error_mode"),  # plain: submit's answer fits the completion
        tools=["write_file", "submit"],
    )
    rows, examples = [], []
    for task, answers in CODE_TASKS.items():
        prompt = [{"role": "user", "content": f"Solve {task} in solution.py, then submit."}]
        rows.append({"prompt": prompt, "task_id": task, "error_mode": "plain"})
        for code in answers:  # one message, two calls: write the file, then submit it
            write = tiny.tool_call("write_file", {"path": "solution.py", "content": code})
            examples.append(
                (prompt, write.removesuffix("<|im_end|>") + tiny.tool_call("submit", {}))
            )
    trainer, recorder, changed = train(adapter, rows, examples, tmp_path, warm_steps=200)
    steps = [h for h in trainer.state.log_history if "loss" in h]
    assert len(steps) == 2 and all(math.isfinite(h["loss"]) for h in steps)
    assert all(h["tools/call_frequency"] > 0 for h in steps)
    check_learned(steps, changed)
    assert len(recorder.rollouts) == 8
    graded = []  # (what the rollout wrote, the grade) per submit that ran
    for _, episode in recorder.rollouts:
        good, bad = CODE_TASKS[episode.row["task_id"]]
        written: str | None = None
        for call in episode.calls:  # a tiny model samples slips: each is a structured error
            if call.error is not None:
                assert call.error["code"] in {"EPISODE_OVER", "INVALID_ARGUMENTS"}, call.error
            elif call.name == "write_file" and call.arguments["path"] == "solution.py":
                written = call.arguments["content"]
            elif call.name == "submit":  # the hidden tests graded the file, in the sandbox
                reward = call.result["reward"]
                want = {good: 1.0, bad: 0.0, None: 0.0}.get(written)
                assert reward == want if want is not None else 0.0 <= reward <= 1.0
                assert episode.done and episode.metadata["task"] == episode.row["task_id"]
                graded.append((written, reward))
    assert len(graded) >= 4 and any(w is not None for w, _ in graded), graded
