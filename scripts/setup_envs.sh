#!/usr/bin/env bash
# Builds `make test`'s three virtualenvs side by side: .venv (scripts/bootstrap.sh), .venv-areal
# (scripts/areal_env.sh) and .venv-camel (scripts/camel_env.sh). Why side by side: each is mostly
# pip fetching and unpacking, so one waits on the network or the disk while another computes.
# They share pip's cache (one wheel fetched or built serves all three), and take turns only at
# the editable install, which writes into the checkout (scripts/one_at_a_time.py). Each one's
# output is printed whole when it ends; any failure fails the set-up.
# Usage: setup_envs.sh [SCRIPT...]   (default: all three; `make test` builds .venv first, then
# the other two beside the main suite: scripts/other_suites.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
logs=$(mktemp -d)
trap 'rm -rf "$logs"' EXIT
names=("$@")
if [ "${#names[@]}" = 0 ]; then names=(bootstrap.sh areal_env.sh camel_env.sh); fi
pids=()
for name in "${names[@]}"; do
  bash "scripts/$name" >"$logs/$name.log" 2>&1 &
  pids+=($!)
done
failed=()
for i in "${!names[@]}"; do
  if wait "${pids[$i]}"; then
    cat "$logs/${names[$i]}.log"
  else
    echo "scripts/${names[$i]} failed:" >&2
    cat "$logs/${names[$i]}.log" >&2
    failed+=("${names[$i]}")
  fi
done
if [ "${#failed[@]}" -gt 0 ]; then exit 1; fi
