"""The `prompt` measurement: the size of Calendar Gym's tool list as a model reads it
(bench/prompt_bench.py), full, compact and as a per-task subset."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from calls._bench import Bench, measurement
from calls._table import Row

BENCH = Path(__file__).resolve().parents[1]


@measurement("prompt", "Calendar Gym tool list as the llm agent sends it (bytes, tokens)")
async def prompt(b: Bench) -> list[Row]:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        str(BENCH / "prompt_bench.py"),
        "--json",
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    try:
        out, err = await asyncio.wait_for(proc.communicate(), 180.0)
    finally:
        if proc.returncode is None:
            proc.kill()
    if proc.returncode != 0:
        raise RuntimeError(f"prompt_bench.py exited {proc.returncode}: {err.decode()[-1500:]}")
    data = json.loads(out)
    how = "SmolLM2 tokenizer" if data["exact_tokens"] else "estimated as bytes / 4"
    return [
        Row(
            f"prompt_tokens_{i}",
            f"tool list tokens: {row['what']}",
            "tokens",
            float(row["tokens"]),
            None,
            False,
            note=f"{row['bytes']:,} bytes; {how}",
        )
        for i, row in enumerate(data["rows"])
    ]
