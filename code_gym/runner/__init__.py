"""Programs that run *inside* a sandbox (stdlib only, no mcpgym imports).

The folder is mounted read-only at `/codegym` in every run: `bootstrap.py` runs a file or a
snippet for `run_python` and reports an uncaught exception as structured fields; `visible.py`
runs the workspace's visible tests for `run_tests`; `driver.py` is the grading driver, which
imports the submission and answers the calls the host recorded; `wire.py` is the value encoding
the host and the driver share. None of them is trusted by the host: whatever they print is parsed
as untrusted data (the agent's own code runs in the same process).
"""
