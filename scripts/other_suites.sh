#!/usr/bin/env bash
# The suites of `make test` that run beside the main suite (scripts/beside.sh): AReaL's own test
# files on areal_runtime, the parity suite on real AReaL (.venv-areal) and camel's (.venv-camel),
# one after another in one worker each. Why beside: the main suite leaves about a tenth of the
# two cores idle (tests that wait on servers, CLIs and subprocesses) and these need about 280 s
# of CPU, so one after the other they kept a core idle for part of 150 s (BENCHMARKS.md, "Tests
# and CI"). Each suite runs even when one before it failed; the exit status is the first failure's.
set -uo pipefail
cd "$(dirname "$0")/.."
status=0
suite() {
  bash scripts/timed.sh "$@"
  local code=$?
  if [ "$status" = 0 ]; then status=$code; fi
}
options=(-q -p no:cacheprovider --durations=5)
suite "AReaL's own tests" .venv/bin/python scripts/areal_tests.py --jobs 1
suite "parity" .venv-areal/bin/python -m pytest "${options[@]}" -n 1 tests/parity
suite "camel" .venv-camel/bin/python -m pytest "${options[@]}" tests/camel
exit "$status"
