"""`mcpgym.tasks.from_dataset`: task sets read with Hugging Face `datasets` from local files and
folders (every format we name), and a loaded set driving resets of a served environment."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest

from mcpgym.errors import InvalidRequest
from mcpgym.tasks import TaskNotFound, from_dataset

pytestmark = pytest.mark.trl
datasets = pytest.importorskip("datasets")

ROWS = [
    {"id": "easy-1", "prompt": "Guess 1-10.", "low": 1, "high": 10},
    {"id": "easy-2", "prompt": "Guess 1-20.", "low": 1, "high": 20},
    {"id": "hard-1", "prompt": "Guess 1-1000.", "low": 1, "high": 1000},
]


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.mark.parametrize("suffix", [".jsonl", ".json", ".csv", ".parquet"])
def test_every_file_format(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"tasks{suffix}"
    if suffix == ".jsonl":
        _jsonl(path, ROWS)
    elif suffix == ".json":
        path.write_text(json.dumps(ROWS), encoding="utf-8")
    elif suffix == ".csv":
        with path.open("w", newline="", encoding="utf-8") as f:
            writer = csv.DictWriter(f, fieldnames=list(ROWS[0]))
            writer.writeheader()
            writer.writerows(ROWS)
    else:
        datasets.Dataset.from_list(ROWS).to_parquet(str(path))
    tasks = from_dataset(path, reset_columns=["low", "high"], cache_dir=str(tmp_path / "c"))
    assert [(s.name, s.type) for s in tasks.list_splits()] == [("train", "train")]
    assert tasks.num_tasks("train") == 3
    assert tasks.get_task("train", 2)["reset"] == {"low": 1, "high": 1000}
    assert tasks.resolve_reset({"task_id": "easy-2", "seed": 5}) == {
        "seed": 5, "low": 1, "high": 20,
    }  # fmt: skip
    assert tasks.find_task("hard-1")["prompt"] == "Guess 1-1000."


def test_a_folder_is_split_by_file_name(tmp_path: Path) -> None:
    folder = tmp_path / "data"
    folder.mkdir()
    _jsonl(folder / "train.jsonl", ROWS[:2])
    _jsonl(folder / "test.jsonl", ROWS[2:])
    tasks = from_dataset(folder, reset_columns=["low", "high"], cache_dir=str(tmp_path / "c"))
    assert sorted((s.name, s.type) for s in tasks.list_splits()) == [
        ("test", "test"), ("train", "train"),
    ]  # fmt: skip
    assert tasks.find_task("hard-1")["split"] == "test"
    only = from_dataset(folder, split="test", cache_dir=str(tmp_path / "c"))
    assert [s.name for s in only.list_splits()] == ["test"]


def test_saved_datasets_and_objects(tmp_path: Path) -> None:
    dd = datasets.DatasetDict(
        {"train": datasets.Dataset.from_list(ROWS), "validation": datasets.Dataset.from_list(ROWS)}
    )
    dd.save_to_disk(str(tmp_path / "saved"))
    loaded = from_dataset(tmp_path / "saved")
    assert [(s.name, s.type) for s in loaded.list_splits()] == [
        ("train", "train"), ("validation", "validation"),
    ]  # fmt: skip
    single = from_dataset(datasets.Dataset.from_list(ROWS), split="eval", id_column="prompt")
    assert single.find_task("Guess 1-10.")["index"] == 0
    assert from_dataset(dd).num_tasks("validation") == 3


def test_reset_column_and_missing_ids(tmp_path: Path) -> None:
    rows = [
        {"prompt": "a", "reset": {"low": 1, "high": 3}},
        {"prompt": "b", "reset": {"task": "t1-create-haircut"}},
    ]
    tasks = from_dataset(_jsonl(tmp_path / "r.jsonl", rows), cache_dir=str(tmp_path / "c"))
    # a JSON object column is an Arrow struct: the keys a row lacks are dropped again
    assert tasks.get_task("train", 0)["reset"] == {"low": 1, "high": 3}
    assert tasks.resolve_reset({"task_id": "train-1"}) == {"task": "t1-create-haircut"}


def test_bad_sources_and_selections(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "t.jsonl", ROWS)
    with pytest.raises(ValueError, match="reset_columns"):
        from_dataset(path, reset_columns=["nope"], cache_dir=str(tmp_path / "c"))
    (tmp_path / "t.unknown").write_text("?", encoding="utf-8")
    with pytest.raises(ValueError, match="format"):
        from_dataset(tmp_path / "t.unknown")
    with pytest.raises(ValueError, match="no split"):
        from_dataset(datasets.DatasetDict({"train": datasets.Dataset.from_list(ROWS)}), split="x")
    tasks = from_dataset(path, cache_dir=str(tmp_path / "c"))
    with pytest.raises(TaskNotFound):
        tasks.resolve_reset({"task_id": "easy-9"})
    with pytest.raises(TaskNotFound):
        tasks.get_task("train", 3)
    with pytest.raises(InvalidRequest):
        tasks.get_task_range("train", 2, 1)
