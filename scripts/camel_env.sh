#!/usr/bin/env bash
# Creates .venv-camel: CAMEL-AI (scripts/camel-requirements.txt) and this repository with its
# runtime extra, so tests/camel can drive the proxy with a real CAMEL ChatAgent. Why a second
# venv: camel-ai pins pydantic==2.12.0, a downgrade the main .venv must not take. Why a stamp:
# a second `make test` costs nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
VENV=.venv-camel
if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv "$VENV"
fi
stamp="$VENV/.camel-env-installed"
want=$(cat scripts/camel_env.sh scripts/camel-requirements.txt scripts/constraints.txt \
  scripts/venv_install.sh pyproject.toml | sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
# shellcheck source=scripts/venv_install.sh
source scripts/venv_install.sh
torch_and_uv "$VENV"
reqs=()
reqs_text=$("$VENV/bin/python" scripts/extra_requirements.py --deps runtime)
while IFS= read -r line; do reqs+=("$line"); done <<<"$reqs_text"  # bash 3.2: no mapfile
uv_install "$VENV" -r scripts/camel-requirements.txt "${reqs[@]}"
# The project last and without dependencies: its editable install writes areal_devkit.egg-info
# into the checkout, one set-up at a time (scripts/setup_envs.sh runs them side by side).
"$VENV/bin/python" scripts/one_at_a_time.py .setup-editable.lock \
  "$VENV/bin/uv" pip install -q --python "$VENV/bin/python" --no-deps -e .
"$VENV/bin/python" - <<'PY'
# Fail the build, not the test run, when the pinned set no longer imports.
import importlib

import pydantic

for name in ("camel.agents", "camel.models", "areal_runtime.experimental.camel.openai_model"):
    importlib.import_module(name)
assert pydantic.VERSION == "2.12.0", pydantic.VERSION
PY
echo "$want" > "$stamp"
