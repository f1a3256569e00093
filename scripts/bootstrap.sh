#!/usr/bin/env bash
# Creates .venv and installs areal-devkit with every extra, once per change of pyproject.toml.
# Why a stamp file: `make test` must be cheap to re-run, yet a fresh machine must get everything.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
stamp=.venv/.areal-devkit-installed
want=$(cat pyproject.toml scripts/constraints.txt | sha256sum | cut -d' ' -f1)
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  .venv/bin/python -m pip install -q --upgrade pip
  # torch first and pinned, so nothing later can resolve a CUDA build.
  .venv/bin/python -m pip install -q -c scripts/constraints.txt "torch==2.13.0"
  .venv/bin/python -m pip install -q -c scripts/constraints.txt -e ".[runtime,agents,train,dev]"
  echo "$want" > "$stamp"
fi
