#!/usr/bin/env bash
# The suites of `make test` that run beside the main suite (scripts/beside.sh): AReaL's own test
# files on areal_runtime (.venv), the parity suite on real AReaL (.venv-areal) and camel's
# (.venv-camel), one after another in one worker each; .venv-areal and .venv-camel are built
# while AReaL's own tests run. Why beside: the main suite leaves part of the two cores idle
# (tests that wait on servers, CLIs and subprocesses), and these suites and set-ups need about
# 330 s of CPU; one after the other they kept a core idle for part of ~190 s (BENCHMARKS.md,
# "Tests and CI"). Each suite runs even when one before it failed; the exit status is the
# first failure's.
set -uo pipefail
cd "$(dirname "$0")/.."
status=0
failed() {
  if [ "$status" = 0 ]; then status=$1; fi
}
suite() {
  bash scripts/timed.sh "$@" || failed $?
}
bash scripts/timed.sh "set-up (.venv-areal, .venv-camel)" \
  bash scripts/setup_envs.sh areal_env.sh camel_env.sh &
setup=$!
options=(-q -p no:cacheprovider --durations=5)
suite "AReaL's own tests" .venv/bin/python scripts/areal_tests.py --jobs 1
if wait "$setup"; then
  suite "parity" .venv-areal/bin/python -m pytest "${options[@]}" -n 1 tests/parity
  suite "camel" .venv-camel/bin/python -m pytest "${options[@]}" tests/camel
else
  failed 1
fi
exit "$status"
