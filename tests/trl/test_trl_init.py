"""TRL's own `GRPOTrainer.__init__` accepts the adapter of every shipped environment: it finds the
expected tools and nothing else, every tool schema renders through `get_json_schema` and the
chat template, and `reset(**row)` takes any columns a dataset may have."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from helpers.compat import TRL_CLIENT, compat

pytestmark = [
    pytest.mark.trl,
    pytest.mark.filterwarnings("ignore:.*gradient_checkpointing.*:FutureWarning"),
    pytest.mark.filterwarnings("ignore::FutureWarning:transformers"),
]
torch = pytest.importorskip("torch")
trl = pytest.importorskip("trl")
datasets = pytest.importorskip("datasets")

from transformers.utils import get_json_schema  # noqa: E402

from calendar_gym import CalendarEnv  # noqa: E402
from mcpgym import MCPEnvironment  # noqa: E402
from mcpgym.examples.everything import EverythingEnv  # noqa: E402
from mcpgym.examples.guess import GuessEnv  # noqa: E402
from mcpgym.integrations import trl_tiny as tiny  # noqa: E402
from mcpgym.integrations.trl import environment_factory, episode_of  # noqa: E402

SHIPPED: list[type[MCPEnvironment]] = [GuessEnv, EverythingEnv, CalendarEnv]
ODD_ROWS: list[dict[str, Any]] = [
    {},
    {"prompt": [{"role": "user", "content": "hi"}], "answer": 42, "meta": {"a": [1, None]}},
    {"image": None, "environment": "x", "weird column": "v", "ünïcode": 1.5, "reset": {"z": 1}},
    {"prompt": "plain text", "seed": 3, "labels": [[1, 2], [3]], "done": True, "tools": []},
]


@pytest.fixture(scope="module")
def tok_and_model() -> tuple[Any, Any]:
    prompt = [{"role": "user", "content": "hello"}]
    tok = tiny.tokenizer([prompt], None)
    return tok, tiny.model(tok)


@compat(
    TRL_CLIENT,
    "GRPOTrainer(environment_factory=...)",
    "works",
    "TRL's own __init__ accepts the adapter of every shipped environment and renders its tools",
)
@pytest.mark.parametrize("env_cls", SHIPPED, ids=lambda c: c.__name__)
def test_trl_accepts_the_adapter(
    env_cls: type[MCPEnvironment], tok_and_model: tuple[Any, Any], tmp_path: Path
) -> None:
    tok, net = tok_and_model
    adapter = environment_factory(env_cls)
    expected = sorted(s.name for s in env_cls.tool_specs.values() if s.visible_in("simulation"))
    trainer = trl.GRPOTrainer(
        model=net,
        processing_class=tok,
        args=trl.GRPOConfig(
            output_dir=str(tmp_path),
            report_to="none",
            use_cpu=True,
            max_steps=1,
            per_device_train_batch_size=2,
            num_generations=2,
        ),
        train_dataset=datasets.Dataset.from_list([{"prompt": [{"role": "user", "content": "x"}]}]),
        environment_factory=adapter,
    )
    tools = trainer._env_tools[None]
    assert sorted(t.__name__ for t in tools) == expected
    assert trainer.reward_func_names == [adapter.__name__]  # get_reward became the reward
    schemas = [get_json_schema(t) for t in tools]  # what TRL renders at the first step
    for schema, tool in zip(schemas, tools, strict=True):
        spec = env_cls.tool_specs[tool.__name__]
        assert schema["function"]["name"] == spec.name
        props = schema["function"]["parameters"]["properties"]
        assert len(props) == len(spec.input_schema.get("properties", {}))
        assert all(p.get("description") for p in props.values())
        required = set(schema["function"]["parameters"].get("required", []))
        assert required == set(spec.input_schema.get("required", []))
    rendered = tok.apply_chat_template(
        [{"role": "user", "content": "x"}], tools=tools, tokenize=False, add_generation_prompt=True
    )
    assert all(f'"name": "{n}"' in rendered for n in expected)
    env = adapter()
    for row in ODD_ROWS:
        assert env.reset(**row) is None
        assert episode_of(env).row == row
