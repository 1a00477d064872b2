"""Run the workspace's visible tests (`test_*.py` at the top and in `tests/`), no pytest needed.

Each `test_*` function of each file is one test. The report is one line on a private copy of
stdout, starting with the record separator (\\x1e): `{"passed", "failed", "total", "tests":
[{"name", "outcome", "file", "line", "column", "type", "message", "text"}]}`; what the tests
print goes to stderr.
"""

import glob
import importlib.util
import json
import linecache
import os
import sys
import traceback

SEP = "\x1e"


def _where(exc, path):
    if isinstance(exc, SyntaxError):
        return exc.filename, exc.lineno, exc.offset, (exc.text or "").strip()
    frames = traceback.extract_tb(exc.__traceback__)
    own = [f for f in frames if f.filename.startswith("/workspace/")]
    last = (own or frames or [None])[-1]
    if last is None:
        return path, None, None, ""
    return last.filename, last.lineno, getattr(last, "colno", None), (last.line or "").strip()


def _entry(name, exc, path):
    file, line, column, text = _where(exc, path)
    if isinstance(file, str) and file.startswith("/workspace/"):
        file = file[len("/workspace/") :]
    message = exc.msg if isinstance(exc, SyntaxError) else str(exc)
    return {
        "name": name,
        "outcome": "error" if not isinstance(exc, AssertionError) else "failed",
        "file": file,
        "line": line,
        "column": column,
        "type": type(exc).__name__,
        "message": message[:1000],
        "text": text[:300],
    }


def main():
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.path.insert(0, "/workspace")
    paths = sorted(glob.glob("/workspace/test_*.py") + glob.glob("/workspace/tests/test_*.py"))
    results = []
    for path in paths:
        rel = path[len("/workspace/") :]
        name = "visible_" + rel[:-3].replace("/", "_")
        try:
            spec = importlib.util.spec_from_file_location(name, path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            spec.loader.exec_module(module)
        except BaseException as exc:
            results.append(_entry(rel, exc, path))
            continue
        for attr in sorted(vars(module)):
            fn = getattr(module, attr)
            if not (attr.startswith("test_") and callable(fn)):
                continue
            try:
                fn()
            except BaseException as exc:
                results.append(_entry(f"{rel}::{attr}", exc, path))
            else:
                results.append({"name": f"{rel}::{attr}", "outcome": "passed"})
    passed = sum(r["outcome"] == "passed" for r in results)
    report = {
        "passed": passed,
        "failed": len(results) - passed,
        "total": len(results),
        "tests": results,
    }
    linecache.clearcache()
    out.write(SEP + json.dumps(report) + "\n")
    out.flush()
    return 0 if passed == len(results) else 1


if __name__ == "__main__":
    sys.exit(main())
