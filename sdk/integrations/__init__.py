"""Adapters that hand mcpgym environments to training libraries.

- `mcpgym.integrations.trl`: `environment_factory(...)` for TRL's `GRPOTrainer`.
- `mcpgym.integrations.bridge`: OpenEnv and Verifiers environments served from their own
  virtualenvs through a worker process (docs/interop.md).

Each adapter imports nothing of its library until it is used, so installing mcpgym never
requires a trainer. docs/training.md covers them and the route for trainers without one.
"""
