#!/usr/bin/env bash
# Creates .venv and installs kgteam with every extra. Idempotent; safe to re-run.
#
# llama-cpp-python is compiled from source (about 10 minutes on 2 cores) as a *portable* build
# (GGML_NATIVE=OFF): the native build enables llama.cpp's AMX kernels on CPUs that report AMX,
# and those segfault on multi-token prompts on some Xeons (ggml-org/llama.cpp#20824; seen here
# with 0.3.36). The wheel is kept in KGTEAM_WHEEL_CACHE so later set-ups skip the compile.
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
LLAMA_VERSION=$(sed -n 's/.*"llama-cpp-python\[server\]==\([0-9.]*\)".*/\1/p' pyproject.toml)
WHEELS=${KGTEAM_WHEEL_CACHE:-$HOME/.cache/kgteam/wheels}
if [ ! -x .venv/bin/python ]; then
  "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --upgrade pip
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}
mkdir -p "$WHEELS"
if ! ls "$WHEELS"/llama_cpp_python-"$LLAMA_VERSION"-*.whl >/dev/null 2>&1; then
  echo "setup: compiling llama-cpp-python $LLAMA_VERSION (portable build, ~10 minutes on 2 cores)" >&2
  CMAKE_ARGS="-DGGML_NATIVE=OFF ${CMAKE_ARGS:-}" .venv/bin/python -m pip wheel --quiet --no-deps --no-cache-dir \
    "llama-cpp-python==$LLAMA_VERSION" -w "$WHEELS"
fi
.venv/bin/python -m pip install --quiet "$WHEELS"/llama_cpp_python-"$LLAMA_VERSION"-*.whl
.venv/bin/python -m pip install --quiet -e '.[all]'
