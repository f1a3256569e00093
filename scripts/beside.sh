#!/usr/bin/env bash
# Runs a command in the background beside a suite that does not keep both cores busy, so no core
# is idle while either runs alone (issue 38: `make test` runs AReaL's own tests, the parity and
# camel suites beside the main suite). The background's output is printed whole when both have
# ended, after the foreground's; the exit status is the first failure's.
# Usage: beside.sh LABEL "BACKGROUND COMMAND" FOREGROUND COMMAND [ARG...]
set -uo pipefail
label=$1
background=$2
shift 2
log=$(mktemp)
trap 'rm -f "$log"' EXIT
bash scripts/timed.sh "$label (beside)" bash -c "$background" >"$log" 2>&1 &
pid=$!
"$@"
status=$?
wait "$pid"
other=$?
echo "== $label"
cat "$log"
if [ "$status" = 0 ]; then status=$other; fi
exit "$status"
