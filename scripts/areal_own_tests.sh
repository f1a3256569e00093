#!/usr/bin/env bash
# Runs AReaL's own tests of the modules the runtime re-implements against areal_runtime:
# copies them from an AReaL checkout into a scratch directory outside this repository, rewrites
# the imports (areal -> areal_runtime) and runs pytest there. Nothing is copied into the repo.
# Usage: scripts/areal_own_tests.sh /path/to/AReaL-checkout [python]
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
areal_src=${1:?usage: scripts/areal_own_tests.sh /path/to/AReaL-checkout [python]}
py=$(realpath -s "${2:-$repo/.venv/bin/python}")
tests=(tests/test_dynamic_import.py tests/test_math_verify_reward.py)
scratch=$(mktemp -d "${TMPDIR:-/tmp}/areal-own-tests.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
for t in "${tests[@]}"; do
  # `areal.x` and `from areal import` -> areal_runtime; areal_runtime itself is left alone.
  sed -E 's/\bareal([. ])/areal_runtime\1/g' "$areal_src/$t" > "$scratch/$(basename "$t")"
done
cd "$scratch"
PYTHONPATH="$repo${PYTHONPATH:+:$PYTHONPATH}" "$py" -m pytest -q -p no:cacheprovider \
  -o asyncio_default_fixture_loop_scope=function "${@:3}" .
