"""Run a workspace file or a snippet; on an uncaught exception, report it as fields too.

`python bootstrap.py FILE [ARGS...]` runs FILE as `__main__`; `python bootstrap.py -c CODE`
runs a snippet (file name `<snippet>`). The traceback is printed as Python prints it (without
this program's frames), then one line starting with the record separator (\\x1e) holds
`{"type", "message", "file", "line", "column", "end_column", "text", "frames"}` for the host.
"""

import json
import os
import runpy
import sys
import traceback

SEP = "\x1e"
HERE = os.path.abspath(__file__)


def _report(exc):
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename != HERE]
    info = {"type": type(exc).__name__, "message": str(exc)[:2000], "frames": []}
    for f in frames[-8:]:
        info["frames"].append({"file": f.filename, "line": f.lineno, "function": f.name})
    if isinstance(exc, SyntaxError):
        info.update(
            file=exc.filename,
            line=exc.lineno,
            column=exc.offset,
            end_column=getattr(exc, "end_offset", None),
            message=exc.msg,
            text=(exc.text or "").rstrip("\n")[:500],
        )
    else:
        own = [
            f for f in frames if f.filename.startswith("/workspace/") or f.filename == "<snippet>"
        ]
        last = (own or frames or [None])[-1]
        if last is not None:
            info.update(
                file=last.filename,
                line=last.lineno,
                column=getattr(last, "colno", None),
                text=(last.line or "")[:500],
            )
    if isinstance(info.get("file"), str) and info["file"].startswith("/workspace/"):
        info["file"] = info["file"][len("/workspace/") :]
    lines = traceback.format_exception(type(exc), exc, exc.__traceback__)
    text = "".join(line for line in lines if HERE not in line)
    sys.stderr.write(text)
    sys.stderr.write(SEP + json.dumps(info) + "\n")
    sys.stderr.flush()


def main():
    if len(sys.argv) < 2:
        sys.stderr.write("usage: bootstrap.py FILE [ARGS...] | -c CODE\n")
        return 2
    sys.path.insert(0, "/workspace")
    try:
        if sys.argv[1] == "-c":
            code = sys.argv[2] if len(sys.argv) > 2 else ""
            sys.argv = ["<snippet>", *sys.argv[3:]]
            namespace = {"__name__": "__main__"}
            exec(compile(code, "<snippet>", "exec"), namespace)
        else:
            sys.argv = sys.argv[1:]
            runpy.run_path(sys.argv[0], run_name="__main__")
    except SystemExit:
        raise
    except BaseException as exc:
        _report(exc)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
