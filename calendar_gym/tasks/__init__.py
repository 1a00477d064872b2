"""The Calendar Gym task suite: versioned task data, its model, and value comparison.

    >>> from calendar_gym.tasks import load_suite
    >>> suite = load_suite()
    >>> sorted(suite.by_tier())
    ['T1', 'T2', 'T3', 'T4']

See docs/calendar_benchmark.md for the task format, the tiers and how tasks are graded.
"""

from calendar_gym.tasks.loader import LATEST, Suite, SuiteError, expand_ids, get_task, load_suite
from calendar_gym.tasks.model import (
    READ_TOOLS,
    Assertion,
    CountAssertion,
    Entity,
    ExistsAssertion,
    FieldAssertion,
    FinishStatus,
    Phrasing,
    Step,
    Task,
    Tier,
    UnchangedAssertion,
    WritePattern,
)

__all__ = [
    "LATEST",
    "READ_TOOLS",
    "Assertion",
    "CountAssertion",
    "Entity",
    "ExistsAssertion",
    "FieldAssertion",
    "FinishStatus",
    "Phrasing",
    "Step",
    "Suite",
    "SuiteError",
    "Task",
    "Tier",
    "UnchangedAssertion",
    "WritePattern",
    "expand_ids",
    "get_task",
    "load_suite",
]
