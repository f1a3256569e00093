#!/usr/bin/env bash
# Runs a command and prints how long it took, so `make test` and CI logs show where the minutes
# go (issue 38) without anyone timing them by hand. Usage: timed.sh LABEL COMMAND [ARG...]
set -uo pipefail
label=$1
shift
start=$SECONDS
"$@"
status=$?
echo "[time] $label: $((SECONDS - start)) s" >&2
exit "$status"
