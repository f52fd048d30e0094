#!/usr/bin/env bash
# Creates .venv and installs kgteam with every extra. Idempotent; safe to re-run.
# The first run compiles llama-cpp-python from source (about 10 minutes on 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}
.venv/bin/python -m pip install --quiet -e '.[all]'
