#!/usr/bin/env bash
# Creates .venv-areal: the real AReaL package (pin in scripts/areal-version.txt) installed
# --no-deps, the CPU packages its workflow-facing modules import (scripts/areal-requirements.txt),
# and this repository (editable, no deps) so tests/parity can import `areal` and `areal_runtime`
# side by side. Why a second venv: AReaL pins transformers<=5.3 and math-verify==0.8.0, which
# the main .venv must not be held to. Why a stamp: a second `make test` costs nothing.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
VENV=.venv-areal
areal_pin=$(grep -v '^\s*#' scripts/areal-version.txt | grep -m1 .)
if [ ! -x "$VENV/bin/python" ]; then
  "$PY" -m venv "$VENV"
fi
stamp="$VENV/.areal-env-installed"
want=$(cat scripts/areal_env.sh scripts/areal-version.txt scripts/areal-requirements.txt \
  scripts/areal-trainer-requirements.txt \
  scripts/constraints.txt scripts/venv_install.sh pyproject.toml | sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi
# shellcheck source=scripts/venv_install.sh
source scripts/venv_install.sh
torch_and_uv "$VENV"
uv_install "$VENV" -r scripts/areal-requirements.txt
# A second step, as AReaL's trainer extras pin what the first set holds newer (swanlab: rich<14).
uv_install "$VENV" -r scripts/areal-trainer-requirements.txt
# AReaL and this repository without their dependency lists: both are covered above.
uv_install "$VENV" --no-deps "$areal_pin"
# The editable install writes areal_devkit.egg-info into the checkout: one set-up at a time
# (scripts/setup_envs.sh runs them side by side).
"$VENV/bin/python" scripts/one_at_a_time.py .setup-editable.lock \
  "$VENV/bin/uv" pip install -q --python "$VENV/bin/python" --no-deps -e .
"$VENV/bin/python" - <<'PY'
# Fail the build, not the test run, when a pinned set no longer imports.
import importlib

for name in (
    "areal.api", "areal.api.cli_args", "areal.api.io_struct", "areal.api.reward_api",
    "areal.workflow.rlvr", "areal.workflow.multi_turn", "areal.workflow.vision_rlvr",
    "areal.workflow.openai.math_agent", "areal.workflow.openai_agent.math_agent",
    "areal.workflow.langchain.math_agent", "areal.utils.data", "areal.utils.dynamic_import",
    "areal.utils.perf_tracer", "areal.utils.hf_utils", "areal.reward.gsm8k",
    "areal.reward.geometry3k", "areal.reward.clevr_count_70k", "areal.experimental.openai",
    "areal_runtime.api", "areal_runtime.utils.data", "pytest_asyncio",
):
    importlib.import_module(name)
PY
echo "$want" > "$stamp"
