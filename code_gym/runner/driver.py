"""Grading driver: import the submission, answer the host's recorded calls, one line each.

Reads `{"calls": [[target, args, kwargs], ...], "call_timeout_s": T}` (values in `wire`'s
encoding) from stdin; `target` is `module:function` (`solution:add`, `pkg.core:parse`). The
answers go, one JSON line per call, to a private copy of stdout; the submission's own stdout and
stderr go to /dev/null. Nothing here is trusted by the host: an answer is only ever a plain
value, judged on the host by the hidden tests the sandbox never sees.
"""

import importlib
import json
import os
import signal
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import wire

sys.path.insert(0, "/workspace")


def _on_alarm(signum, frame):
    raise TimeoutError("the call took too long")


def main():
    request = json.loads(sys.stdin.read())
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    limit = float(request.get("call_timeout_s", 2.0))
    signal.signal(signal.SIGALRM, _on_alarm)
    found = {}
    for i, (target, args, kwargs) in enumerate(request["calls"]):
        line = {"i": i}
        try:
            module, _, name = target.partition(":")
            if module not in found:
                found[module] = importlib.import_module(module)
            fn = found[module]
            for part in name.split("."):
                fn = getattr(fn, part)
            signal.setitimer(signal.ITIMER_REAL, limit)
            try:
                value = fn(*wire.decode(args), **wire.decode(kwargs))
            finally:
                signal.setitimer(signal.ITIMER_REAL, 0)
            line["ok"] = wire.encode(value)
        except BaseException as exc:  # the submission's failure is an answer too
            line["raised"] = type(exc).__name__
            line["message"] = str(exc)[:300]
        out.write(json.dumps(line) + "\n")
        out.flush()
    out.close()


if __name__ == "__main__":
    main()
