"""Code Gym: grade all 164 HumanEval canonical solutions, each in a fresh sandbox.

Prints wall time, CPU time (this process, and the sandboxes it waited for) and the load average
before and after, and exits non-zero unless every solution scored 1.0. Bounded: `--deadline`
seconds (default 600) for the whole run; the grading threads (`--workers`, default 2) stop
taking work past it. Nothing is left running: each grade closes its sandbox.

    python bench/code_grading.py [--workers N] [--limit N] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from code_gym.grading import grade
from code_gym.tasks import get_task, humaneval_ids


def _cpu() -> tuple[float, float]:
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime, kids.ru_utime + kids.ru_stime


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--limit", type=int, default=164, help="grade the first N problems")
    p.add_argument("--deadline", type=float, default=600.0)
    p.add_argument("--json", action="store_true")
    args = p.parse_args(argv)
    tasks = [get_task(t) for t in humaneval_ids()[: args.limit]]
    for task in tasks:  # the host-side recordings are built once; not part of the figure
        task.recording()
    load_before = os.getloadavg()
    start, (cpu_me0, cpu_kids0) = time.monotonic(), _cpu()
    stop = start + args.deadline

    def one(task):  # type: ignore[no-untyped-def]
        if time.monotonic() > stop:
            return task.id, None
        return task.id, grade(task, {**task.files, **task.solution})

    with ThreadPoolExecutor(max_workers=args.workers) as pool:
        grades = dict(pool.map(one, tasks))
    wall = time.monotonic() - start
    cpu_me1, cpu_kids1 = _cpu()
    durations = [g.duration_s for g in grades.values() if g is not None]
    figures = {
        "graded": len(durations),
        "scored_1": sum(1 for g in grades.values() if g is not None and g.reward == 1.0),
        "wall_s": round(wall, 2),
        "cpu_server_s": round(cpu_me1 - cpu_me0, 2),
        "cpu_sandboxes_s": round(cpu_kids1 - cpu_kids0, 2),
        "per_task_p50_s": round(statistics.median(durations), 3) if durations else None,
        "per_task_max_s": round(max(durations), 3) if durations else None,
        "workers": args.workers,
        "cores": os.cpu_count(),
        "load_before": [round(x, 2) for x in load_before],
        "load_after": [round(x, 2) for x in os.getloadavg()],
    }
    if args.json:
        print(json.dumps(figures))
    else:
        print(f"Code Gym grading: {figures['scored_1']}/{len(tasks)} canonical solutions at 1.0")
        print(
            f"  wall {figures['wall_s']} s with {args.workers} workers on {figures['cores']} "
            f"cores; CPU {figures['cpu_server_s']} s server + {figures['cpu_sandboxes_s']} s "
            f"sandboxes; per task p50 {figures['per_task_p50_s']} s, max "
            f"{figures['per_task_max_s']} s"
        )
        print(f"  load average before {figures['load_before']}, after {figures['load_after']}")
    wrong = [t for t, g in grades.items() if g is None or g.reward != 1.0]
    if wrong:
        print(f"NOT 1.0 (or not graded in time): {wrong}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
