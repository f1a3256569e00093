#!/usr/bin/env bash
# Creates .venv and installs areal-devkit into it, once per change of pyproject.toml.
#   bootstrap.sh        every extra (runtime, agents, train, dev): `make test`, `make lint`, ...
#   bootstrap.sh demo   only what `make demo` runs: runtime and train, plus the Anthropic SDK
#                       (its tool agent), the OpenAI Agents SDK (AReaL's quick start agent) and
#                       pytest (the generated tests), at pyproject.toml's bounds.
# Why two sets: the demo's set-up skips the Claude Code CLI (a ~180 MB wheel), LangChain
# and the test-only tools; `make test` still installs everything on a fresh machine.
# Why stamp files: `make test` must be cheap to re-run, yet a fresh machine must get everything.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
want_set=${1:-all}
case "$want_set" in
  all) extras="runtime,agents,train,dev"; extra_reqs=() ;;
  demo) extras="runtime,train"; extra_reqs=(agents:anthropic agents:openai-agents dev:pytest dev:pytest-asyncio) ;;
  *) echo "usage: bootstrap.sh [all|demo]" >&2; exit 2 ;;
esac
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
full_stamp=.venv/.areal-devkit-installed
stamp=$full_stamp
if [ "$want_set" = demo ]; then stamp=.venv/.areal-devkit-demo-installed; fi
want=$(cat pyproject.toml scripts/constraints.txt scripts/venv_install.sh | sha256sum | cut -d' ' -f1)
# Everything installed covers the demo's set too.
if [ -f "$full_stamp" ] && [ "$(cat "$full_stamp")" = "$want" ]; then exit 0; fi
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then exit 0; fi
# The dependencies of the extras, then the demo's single packages (bash 3.2: no mapfile).
reqs=()
reqs_text=$(.venv/bin/python scripts/extra_requirements.py --deps "$extras")
if [ "${#extra_reqs[@]}" -gt 0 ]; then
  reqs_text+=$'\n'$(.venv/bin/python scripts/extra_requirements.py "${extra_reqs[@]}")
fi
while IFS= read -r line; do reqs+=("$line"); done <<<"$reqs_text"
# shellcheck source=scripts/venv_install.sh
source scripts/venv_install.sh
torch_and_uv .venv
uv_install .venv "${reqs[@]}"
# The project itself last, without dependencies (all installed above): the editable install
# writes areal_devkit.egg-info into the checkout, so the set-ups that scripts/setup_envs.sh runs
# side by side take turns at this step.
.venv/bin/python scripts/one_at_a_time.py .setup-editable.lock \
  .venv/bin/uv pip install -q --python .venv/bin/python --no-deps -e .
echo "$want" > "$stamp"
