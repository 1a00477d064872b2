#!/usr/bin/env bash
# The source laid out as the installed package (build/typecheck/mcpgym: sdk/ with servers/ and
# harness/ inside it), as symlinks: pyright and import-linter read the code through it, since
# neither follows setuptools' package-dir mapping. calendar_gym needs no mapping.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf build/typecheck && mkdir -p build/typecheck/mcpgym
cp -rs "$PWD/sdk/." build/typecheck/mcpgym/
cp -rs "$PWD/servers" build/typecheck/mcpgym/servers
cp -rs "$PWD/harness" build/typecheck/mcpgym/harness
find build/typecheck -name __pycache__ -prune -exec rm -rf {} +
