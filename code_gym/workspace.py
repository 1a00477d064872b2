"""Tool mixin: the session's workspace — write, read and list files; run Python; run tests.

Every path is relative to the workspace (`/workspace` inside the sandbox) and checked here
before the sandbox's own host-side checks (which also refuse symlinks): no absolute paths, no
`..`, no NUL, at most `MAX_FILE_BYTES` per file. Programs run through the read-only runner
(`code_gym/runner/bootstrap.py`, `visible.py`) so a failure comes back as fields.

The mixin expects `self.sandbox` (a `code_gym.sandbox.Sandbox`), `self.error_mode` and
`self._begin(tool)` (counts the call and refuses it once the episode is over) from `CodeEnv`.
"""

from __future__ import annotations

import difflib
import posixpath
from typing import Annotated, Any

from pydantic import Field

from code_gym.errors import CodeError, ErrorMode, render
from code_gym.grading import MOUNT, RUNNER
from code_gym.outcomes import python_result, suite_result
from code_gym.sandbox import Limits, RunResult, Sandbox, SandboxBusy, SandboxUnavailable
from mcpgym import tool

__all__ = [
    "MAX_CODE_BYTES",
    "MAX_FILE_BYTES",
    "WorkspaceTools",
    "busy",
    "check_path",
    "near_names",
]

MAX_FILE_BYTES = 256 * 1024
MAX_CODE_BYTES = 64 * 1024
MAX_FILES = 200


NEAR_CANDIDATES = 64
"""How many workspace names "did you mean" compares (those closest in length)."""


def near_names(rel: str, files: list[str]) -> list[str]:
    """Up to three names like `rel`, for a "did you mean" hint. Bounded: difflib compares at
    most `NEAR_CANDIDATES` names of at most 255 characters (a program can fill the workspace
    with thousands of long look-alike names, and each comparison is quadratic in length)."""
    pool = sorted((f for f in files if len(f) <= 255), key=lambda f: abs(len(f) - len(rel)))
    return difflib.get_close_matches(rel, pool[:NEAR_CANDIDATES], n=3)


def busy(exc: SandboxBusy) -> CodeError:
    """The structured refusal of a run that found no free run slot in time (nothing ran)."""
    return CodeError(
        "SANDBOX_BUSY",
        f"The server is running as many programs as it allows: {exc}",
        hint="Nothing ran and nothing changed; call the tool again in a moment.",
    )


def check_path(path: str, field: str = "path") -> str:
    """`path` as a normalised workspace-relative POSIX path; `CodeError` if it could escape."""
    hint = "Use a path relative to the workspace, such as solution.py or pkg/core.py."
    if not path or "\x00" in path or len(path) > 255:
        raise CodeError(
            "INVALID_PATH",
            f"{path!r} is not a usable file name.",
            field=field,
            got=path[:255],
            hint=hint,
        )
    if path.startswith("/") or "\\" in path:
        raise CodeError(
            "INVALID_PATH",
            f"{path!r} is absolute or uses backslashes; paths are relative to the workspace.",
            field=field,
            got=path,
            hint=hint,
        )
    norm = posixpath.normpath(path)
    if norm == "." or norm.startswith("../") or norm == ".." or "/../" in f"/{path}/":
        raise CodeError(
            "INVALID_PATH", f"{path!r} leaves the workspace.", field=field, got=path, hint=hint
        )
    return norm


class WorkspaceTools:
    """Tool mixin (see the module docstring)."""

    sandbox: Sandbox
    error_mode: ErrorMode
    run_limits: Limits | None = None

    def _begin(self, tool: str) -> None:  # pragma: no cover - provided by CodeEnv
        raise NotImplementedError

    async def _abegin(self, tool: str) -> None:  # pragma: no cover - provided by CodeEnv
        raise NotImplementedError

    def _fail(self, tool: str, err: CodeError) -> Exception:
        return render(err, self.error_mode, tool)

    def _files(self) -> list[str]:
        return sorted(str(p) for p in self.sandbox.list_files())

    async def _run(self, tool: str, argv: list[str], stdin: str | None = None) -> RunResult:
        # awaited on the event loop: a session's long run holds no worker thread of the server
        try:
            return await self.sandbox.arun(
                argv,
                stdin=stdin,
                limits=self.run_limits,
                ro_mounts={str(RUNNER): MOUNT},
            )
        except SandboxUnavailable as exc:
            raise self._fail(
                tool,
                CodeError(
                    "SANDBOX_UNAVAILABLE",
                    f"The sandbox cannot run programs here: {exc}",
                    hint="This is the server's fault, not your call's.",
                ),
            ) from None
        except SandboxBusy as exc:
            raise self._fail(tool, busy(exc)) from None

    @tool
    def write_file(
        self,
        path: Annotated[str, Field(description="Workspace-relative path, e.g. solution.py.")],
        content: Annotated[str, Field(description="The whole new content of the file.")],
    ) -> dict[str, Any]:
        """Create or replace a file in the workspace (folders are created as needed)."""
        self._begin("write_file")
        try:
            rel = check_path(path)
            try:
                size = len(content.encode("utf-8"))
            except UnicodeEncodeError as exc:  # a lone surrogate (in-process callers)
                raise CodeError(
                    "INVALID_ARGUMENTS",
                    f"The content is not valid text: {exc.reason} at index {exc.start}.",
                    field="content",
                    got=None,
                    hint="Send the file as UTF-8 text (no lone surrogate code points).",
                ) from None
            if size > MAX_FILE_BYTES:
                raise CodeError(
                    "FILE_TOO_LARGE",
                    f"The content is {size} bytes; a file holds at most {MAX_FILE_BYTES}.",
                    field="content",
                    got=size,
                    hint="Split the code over several files.",
                )
            if rel not in self._files() and len(self._files()) >= MAX_FILES:
                raise CodeError(
                    "FILE_TOO_LARGE",
                    f"The workspace already holds {MAX_FILES} files.",
                    field="path",
                    got=rel,
                    hint="Overwrite a file instead.",
                )
            try:
                self.sandbox.write_file(rel, content)
            except (OSError, ValueError) as exc:
                raise CodeError(
                    "INVALID_PATH",
                    f"Cannot write {rel!r}: {exc}",
                    field="path",
                    got=rel,
                    hint="Write a regular file inside the workspace.",
                ) from None
        except CodeError as err:
            raise self._fail("write_file", err) from None
        return {"path": rel, "bytes": size}

    @tool
    def read_file(
        self, path: Annotated[str, Field(description="Workspace-relative path of the file.")]
    ) -> dict[str, Any]:
        """Read a file of the workspace."""
        self._begin("read_file")
        try:
            rel = check_path(path)
            files = self._files()
            if rel not in files:
                near = near_names(rel, files)
                raise CodeError(
                    "FILE_NOT_FOUND",
                    f"No file {rel!r} in the workspace.",
                    field="path",
                    got=rel,
                    suggestions=near,
                    hint=f"Did you mean {near[0]}?"
                    if near
                    else "Call list_files to see what exists.",
                )
            try:
                text = self.sandbox.read_file(rel)
            except (OSError, ValueError, UnicodeDecodeError) as exc:
                raise CodeError(
                    "INVALID_PATH",
                    f"Cannot read {rel!r}: {exc}",
                    field="path",
                    got=rel,
                    hint="Read a regular text file of the workspace.",
                ) from None
        except CodeError as err:
            raise self._fail("read_file", err) from None
        if len(text) > MAX_FILE_BYTES:
            return {"path": rel, "content": text[:MAX_FILE_BYTES], "truncated": True}
        return {"path": rel, "content": text, "truncated": False}

    @tool
    def list_files(self) -> dict[str, Any]:
        """List every file of the workspace (paths relative to it)."""
        self._begin("list_files")
        return {"files": self._files()}

    @tool
    async def run_python(
        self,
        file: Annotated[
            str | None, Field(description="A workspace file to run as __main__.")
        ] = None,
        code: Annotated[
            str | None, Field(description="A snippet to run instead of a file.")
        ] = None,
        args: Annotated[list[str] | None, Field(description="Command-line arguments.")] = None,
        stdin: Annotated[str | None, Field(description="Text for the program's stdin.")] = None,
    ) -> dict[str, Any]:
        """Run a workspace file or a snippet in the sandbox (cwd: the workspace). Returns stdout,
        stderr, exit_code, truncation flags and, when it fails, the error's type,
        message, file, line and column."""
        await self._abegin("run_python")
        try:
            if (file is None) == (code is None):
                raise CodeError(
                    "INVALID_ARGUMENTS",
                    "Give exactly one of file and code.",
                    field="file" if file is None else "code",
                    got=None,
                    hint='Call run_python(file="main.py") or run_python(code="print(1)").',
                )
            extra = [str(a) for a in (args or [])]
            if file is not None:
                rel = check_path(file, "file")
                if rel not in self._files():
                    near = near_names(rel, self._files())
                    raise CodeError(
                        "FILE_NOT_FOUND",
                        f"No file {rel!r} to run.",
                        field="file",
                        got=rel,
                        suggestions=near,
                        hint="Write it with write_file first, or call list_files.",
                    )
                argv = ["python", f"{MOUNT}/bootstrap.py", f"/workspace/{rel}", *extra]
            else:
                assert code is not None
                if len(code.encode("utf-8")) > MAX_CODE_BYTES:
                    raise CodeError(
                        "FILE_TOO_LARGE",
                        f"A snippet holds at most {MAX_CODE_BYTES} bytes.",
                        field="code",
                        hint="Write a file and run it.",
                    )
                argv = ["python", f"{MOUNT}/bootstrap.py", "-c", code, *extra]
        except CodeError as err:
            raise self._fail("run_python", err) from None
        return python_result(await self._run("run_python", argv, stdin), self.error_mode)

    @tool
    async def run_tests(self) -> dict[str, Any]:
        """Run the workspace's visible tests (test_*.py, tests/test_*.py; every test_ function).
        The grader's hidden tests are others."""
        await self._abegin("run_tests")
        result = suite_result(
            await self._run("run_tests", ["python", f"{MOUNT}/visible.py"]), self.error_mode
        )
        self.after_tests(result)
        return result

    def after_tests(self, result: dict[str, Any]) -> None:
        """Hook: a test run finished (the shaped reward reads it)."""
