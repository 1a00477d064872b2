"""The marks every test that runs a real GRPOTrainer carries (beside `pytest.mark.trl`)."""

from __future__ import annotations

import pytest

GRPO_RUN = [
    # a shared CI core: the imports alone take tens of seconds under load, past the default 120 s
    pytest.mark.timeout(600),
    # transformers 5.24 deprecates names that TRL 1.16 still passes along; not ours to fix
    pytest.mark.filterwarnings("ignore:.*gradient_checkpointing.*:FutureWarning"),
    pytest.mark.filterwarnings("ignore::FutureWarning:transformers"),
    pytest.mark.filterwarnings("ignore:.*tensor.detach.*:UserWarning"),
]
