"""A griffe extension for the docs site: reads a Google-style `Example:` section (the singular
form this codebase writes, and Google's style guide allows) as an examples section, so doctest
lines render as code instead of Markdown."""

from __future__ import annotations

import re
from typing import Any

import griffe

_SINGULAR = re.compile(r"^(\s*)Example:\s*$", re.M)


class ExampleSections(griffe.Extension):
    """Rewrites `Example:` headings to `Examples:` before the docstring is parsed."""

    def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = _SINGULAR.sub(r"\1Examples:", obj.docstring.value)
