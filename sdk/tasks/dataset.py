"""`DatasetTaskSet`: a task set read from a Hugging Face `datasets` dataset (`from_dataset`).

Each row is a task: its columns, plus `id` (from the id column, else `<split>-<index>`), `split`,
`index` and `reset` (the reset options: the `reset_columns` of the row, or its `reset` column).
Rows are read on demand through the dataset's own indexing, so a large Arrow-backed split is never
copied into Python objects whole. `datasets` is imported only here (the `datasets` extra).
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from mcpgym.tasks.base import Split, SplitType, Task, TaskSet, _split_type

__all__ = ["DatasetTaskSet", "from_dataset", "load_task_set"]

_BUILDERS = {
    ".json": "json",
    ".jsonl": "json",
    ".csv": "csv",
    ".parquet": "parquet",
    ".arrow": "arrow",
    ".txt": "text",
}


class DatasetTaskSet(TaskSet):
    """Tasks from the splits of a dataset (see the module docstring); built by `from_dataset`."""

    def __init__(
        self,
        splits: Mapping[str, Any],
        *,
        id_column: str = "id",
        reset_columns: Sequence[str] | None = None,
        split_types: Mapping[str, SplitType] | None = None,
    ) -> None:
        self.splits: dict[str, Any] = dict(splits)
        self.id_column = id_column
        self.reset_columns = list(reset_columns) if reset_columns is not None else None
        self._types: dict[str, SplitType] = dict(split_types or {})
        for name, ds in self.splits.items():
            columns = list(getattr(ds, "column_names", []))
            missing = [c for c in self.reset_columns or [] if c not in columns]
            if missing:
                raise ValueError(
                    f"split {name!r} has no column(s) {missing} named in reset_columns; "
                    f"its columns: {columns}"
                )

    def list_splits(self) -> list[Split]:
        return [Split(name=n, type=self._types.get(n, _split_type(n))) for n in self.splits]

    def num_tasks(self, split: str) -> int:
        return len(self.splits[self.check_split(split)])

    def load_task(self, split: str, index: int) -> Task:
        row: dict[str, Any] = dict(self.splits[split][index])
        task: Task = dict(row)
        ident = row.get(self.id_column)
        task["id"] = str(ident) if ident is not None else f"{split}-{index}"
        task["split"], task["index"] = split, index
        task["reset"] = self._reset_of(row)
        return task

    def _reset_of(self, row: Mapping[str, Any]) -> dict[str, Any]:
        if self.reset_columns is not None:
            return {c: row[c] for c in self.reset_columns}
        found = row.get("reset")
        if not isinstance(found, Mapping):
            return {}
        # a JSON object column becomes an Arrow struct: keys a row lacks come back as None
        return {str(k): v for k, v in found.items() if v is not None}

    def _ids(self) -> dict[str, tuple[str, int]]:
        cached: dict[str, tuple[str, int]] | None = self.__dict__.get("_id_index")
        if cached is None:
            cached = {}
            for name, ds in self.splits.items():
                has_ids = self.id_column in getattr(ds, "column_names", [])
                ids = ds[self.id_column] if has_ids else [None] * len(ds)
                for i, ident in enumerate(ids):
                    key = str(ident) if ident is not None else f"{name}-{i}"
                    cached.setdefault(key, (name, i))
            self.__dict__["_id_index"] = cached
        return cached


def _datasets() -> Any:
    """The `datasets` module, untyped: its types vary by release and it is optional."""
    try:
        return importlib.import_module("datasets")
    except ImportError as exc:  # pragma: no cover - depends on the installation
        raise ImportError(
            "from_dataset needs the `datasets` package: pip install 'mcpgym[datasets]'"
        ) from exc


def _load(source: Any, split: str | None, load_kwargs: dict[str, Any]) -> dict[str, Any]:
    datasets = _datasets()

    if isinstance(source, datasets.Dataset):
        return {split or "train": source}
    if isinstance(source, datasets.DatasetDict):
        return {str(name): ds for name, ds in source.items()}
    if isinstance(source, str | Path) and Path(source).exists():
        path = Path(source)
        if path.is_dir() and any((path / f).exists() for f in ("dataset_dict.json", "state.json")):
            loaded = datasets.load_from_disk(str(path))  # written by save_to_disk
        elif path.is_file():
            builder = _BUILDERS.get(path.suffix.lower())
            if builder is None:
                raise ValueError(
                    f"cannot tell the format of {path.name}; use one of {sorted(_BUILDERS)}"
                )
            name = split or "train"
            loaded = datasets.load_dataset(builder, data_files={name: str(path)}, **load_kwargs)
        else:
            loaded = datasets.load_dataset(str(path), **load_kwargs)
    else:
        loaded = datasets.load_dataset(str(source), **load_kwargs)
    if isinstance(loaded, datasets.Dataset):
        return {split or "train": loaded}
    return {str(name): ds for name, ds in loaded.items()}


def load_task_set(
    source: Any,
    *,
    split: str | None = None,
    id_column: str = "id",
    reset_columns: Sequence[str] | None = None,
    split_types: Mapping[str, SplitType] | None = None,
    **load_kwargs: Any,
) -> DatasetTaskSet:
    """`mcpgym.tasks.from_dataset` (see there)."""
    splits = _load(source, split, dict(load_kwargs))
    if split is not None:
        if split not in splits:
            raise ValueError(f"the dataset has no split {split!r}; splits: {sorted(splits)}")
        splits = {split: splits[split]}
    return DatasetTaskSet(
        splits, id_column=id_column, reset_columns=reset_columns, split_types=split_types
    )


def from_dataset(
    source: Any,
    *,
    split: str | None = None,
    id_column: str = "id",
    reset_columns: Sequence[str] | None = None,
    split_types: Mapping[str, SplitType] | None = None,
    **load_kwargs: Any,
) -> DatasetTaskSet:
    """A task set from a Hugging Face `datasets` dataset (needs the `datasets` extra).

    Args:
        source: a `Dataset` or `DatasetDict`, a local file (`.json`, `.jsonl`, `.csv`,
            `.parquet`, `.arrow`), a local folder (its files become splits by name), or a hub id.
        split: keep only this split (a file or a single `Dataset` is split `"train"` unless
            named otherwise here).
        id_column: the column holding each task's id (default `id`; missing: `<split>-<index>`).
        reset_columns: columns that are reset options; by default a `reset` column (a mapping)
            is used when the dataset has one.
        split_types: `train` / `validation` / `test` per split (default: from the name).
        **load_kwargs: passed to `datasets.load_dataset` (e.g. `revision=`, `data_files=`).

    Example:
        >>> tasks = from_dataset("tasks.jsonl", reset_columns=["low", "high"])  # doctest: +SKIP
        >>> tasks.resolve_reset({"task_id": "easy-1"})  # doctest: +SKIP
        {'low': 1, 'high': 10}
    """
    return load_task_set(
        source,
        split=split,
        id_column=id_column,
        reset_columns=reset_columns,
        split_types=split_types,
        **load_kwargs,
    )
