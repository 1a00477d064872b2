"""The worker side of the bridge: standalone scripts run by *another* virtualenv's Python.

Nothing here imports mcpgym, pydantic or any third-party package at module level: the host passes
`bridge_worker.py` to the worker's interpreter, whose folder then comes first on `sys.path`, and
the worker imports its siblings (`bridge_wire`, the backends) by their plain names. Importing the
files as part of mcpgym (tests, the wheel check) works too.
"""
