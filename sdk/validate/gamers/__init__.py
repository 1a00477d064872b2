"""The gamer panel (level 3): generic gamers every environment is measured against for free.

A *gamer* is a policy that tries to earn reward without solving the task. The panel plays each
one on every episode of the played task sets, driven by the environment's oracle (what the
request is, which values it resolves, what it writes) and its manifest (`panel:`), and fails
naming every gamer that beats its gates:

- `simple`: constant finishers, try-the-request-then-constant-status, random schema-valid
  calls, replays of another task's oracle plan (same template), the error exploit;
- `positional`: first / second / last hit of a declared look-up, verifying nothing;
- `collateral`: the oracle's plan plus one unrequested change must lose full marks;
- `processes`: the same actions on a second server process give the same episode.

`table` holds the episodes and the player, `scores` the metrics, gates and the printed table,
`checks` the registered `check_*` functions. docs/validation.md lists every gamer and gate.
"""
