"""The warm sandbox's first program (inside the sandbox, stdlib only): start Python, wait, run.

A `Sandbox` with `warm_mounts` starts its next run's sandbox ahead of time with this program
as `python launcher.py`: the interpreter starts and imports what Code Gym's runner programs use,
then blocks reading stdin. The run hands it one request on stdin — 8 bytes of big-endian length,
then a JSON list `[mode, target, *args]` — followed by the program's own stdin. `mode` `file`
runs `target` as `__main__` (as `python FILE ARGS`), `code` runs the snippet `target` (as
`python -c CODE ARGS`). Nothing of this program remains visible to the run but the modules it
imported: its frames are cut from an uncaught exception's traceback, and the exit status is the
interpreter's own (SystemExit's code, 1 after an uncaught exception).

Each sandbox runs exactly one program: the isolation of a warm run is that of a cold one.
"""

import os
import sys


def _read(n):
    data = b""
    while len(data) < n:
        chunk = os.read(0, n - len(data))
        if not chunk:  # the host dropped this spare sandbox before using it
            os._exit(0)
        data += chunk
    return data


# What the runner's programs (bootstrap, visible tests) import: loaded before the request.
import importlib.machinery  # noqa: E402
import json  # noqa: E402
import runpy  # noqa: E402
import traceback  # noqa: E402,F401
import types  # noqa: E402

_OWN = (__file__, runpy.__file__, "<frozen runpy>")


def _fresh_main(loader):
    main = types.ModuleType("__main__")
    main.__loader__ = loader
    main.__annotations__ = {}
    sys.modules["__main__"] = main
    return main


def _run_file(target, args):
    path = os.path.abspath(target)
    sys.argv = [target, *args]
    sys.path[0] = os.path.dirname(os.path.realpath(path))
    if not os.path.isfile(path):  # a directory or zip with __main__.py
        runpy.run_path(target, run_name="__main__")
        return
    try:
        with open(path, "rb") as f:
            source = f.read()
    except OSError as exc:  # as the interpreter says it
        sys.stderr.write(f"{sys.executable}: can't open file {path!r}: [Errno {exc.errno}] ")
        sys.stderr.write(f"{exc.strerror}\n")
        sys.exit(2)
    main = _fresh_main(importlib.machinery.SourceFileLoader("__main__", path))
    main.__file__, main.__cached__ = path, None
    exec(compile(source, path, "exec"), vars(main))


def _main():
    size = int.from_bytes(_read(8), "big")
    mode, target, *args = json.loads(_read(size).decode("utf-8"))
    if mode == "file":
        _run_file(target, args)
    else:
        sys.argv = ["-c", *args]
        sys.path[0] = ""
        main = _fresh_main(importlib.machinery.BuiltinImporter)
        exec(compile(target, "<string>", "exec"), vars(main))


if __name__ == "__main__":  # run by path inside a spare; importing it (a wheel check) runs nothing
    try:
        _main()
    except SystemExit:
        raise
    except BaseException as exc:
        tb = exc.__traceback__
        while tb is not None and tb.tb_frame.f_code.co_filename in _OWN:  # not this program's
            tb = tb.tb_next
        sys.excepthook(type(exc), exc.with_traceback(tb), tb)
        sys.exit(1)
