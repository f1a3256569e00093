#!/usr/bin/env bash
# The README's main job, on the embedded default model, each step as short as still shows it:
#   0. set-up: .venv with what the demo needs (scripts/bootstrap.sh; `make test` adds the rest),
#   1. scaffold a workflow into a copy of the bundled example project (areal-devkit new),
#   2. lint it (areal-lint), 3. run its generated tests (pytest),
#   4. check it on the embedded default model (areal-devkit check),
#   5. run it on the bundled dataset (areal-devkit run), writing the trajectories and the
#      viewer page to demo_output/,
#   6. train it (areal-devkit train): the reward table and the reward plot,
#   7. AReaL's agent quick start, renamed, and its statistics page (areal-devkit view),
#   8. a tool agent (Anthropic SDK, a tool call, its result, the answer) learning to use its tool.
# Step 8 is the longest, so it trains in the background from the scaffold on, beside steps 2-7,
# which run one after another (two processes for two cores; torch uses one thread in each; the
# generated test's stall check holds beside a busy CPU: BENCHMARKS.md, "The stall detector's
# verdict"). Its output is printed when it ends, then the time of every step and the total.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out="$root/demo_output"
bin="$root/.venv/bin"
# Steps of each training run (BENCHMARKS.md, "The demo": why these numbers); small ones to try it.
tool_steps=${TOOL_STEPS:-20}
train_steps=${TRAIN_STEPS:-30}
quick_steps=${QUICK_STEPS:-10}

now() { if [ -n "${EPOCHREALTIME:-}" ]; then echo "${EPOCHREALTIME/,/.}"; else date +%s; fi; }
started=$(now)
timings=()
# record NAME START [END]: the step's wall time, for the table at the end.
record() { timings+=("$1|$(awk -v a="$2" -v b="${3:-$(now)}" 'BEGIN { printf "%.1f", b - a }')"); }

echo "== 0. set-up: scripts/bootstrap.sh (.venv with the runtime, train and demo extras)"
t=$(now)
bash scripts/bootstrap.sh demo
record "0. set-up" "$t"

mkdir -p "$out"
work=$(mktemp -d)
bg=""
cleanup() {
  if [ -n "$bg" ]; then pkill -P "$bg" 2>/dev/null || true; kill "$bg" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
cp -r examples/seed_projects/lazy_project "$work/project"
cd "$work/project"

echo "== 1. scaffold: areal-devkit new arithmetic --variant rlvr --package myproj.workflow"
echo "   and the tool agent of step 8: areal-devkit new calc --variant agent_anthropic"
t=$(now)
"$bin/areal-devkit" new arithmetic --variant rlvr --package myproj.workflow
"$bin/areal-devkit" new calc --variant agent_anthropic --package myproj.workflow
record "1. scaffold" "$t"

# Step 8 starts now and runs beside steps 2-7; its output goes to a file until it ends.
t8=$(now)
(
  rc=0
  "$bin/areal-devkit" train myproj.workflow.calc:CalcAgent --steps "$tool_steps" \
    --plot "$out/tool_agent_reward.png" --output "$out/tool_agent_episodes.jsonl" \
    --metrics-out "$out/tool_agent_metrics.jsonl" --quiet || rc=$?
  now >"$work/step8.end"
  exit "$rc"
) >"$work/step8.log" 2>&1 &
bg=$!

echo "== 2. lint: areal-lint myproj tests"
t=$(now)
"$bin/areal-lint" myproj tests && echo "areal-lint: no findings"
record "2. lint" "$t"

echo "== 3. generated tests"
t=$(now)
"$bin/python" -m pytest -q -p no:cacheprovider tests/test_arithmetic_workflow.py
record "3. test" "$t"

echo "== 4. check on the embedded default model: every trained token is what the engine sampled"
t=$(now)
"$bin/areal-devkit" check myproj.workflow.arithmetic:ArithmeticWorkflow --limit 8
record "4. check" "$t"

echo "== 5. run on the embedded default model (bundled arithmetic dataset)"
t=$(now)
"$bin/areal-devkit" run myproj.workflow.arithmetic:ArithmeticWorkflow \
  --kwargs '{"reward_fn": "areal_runtime.models.default_model.arithmetic_reward"}' \
  --output "$out/trajectories.jsonl" --html "$out/episodes.html"
echo "open $out/episodes.html in a browser to see every episode's tokens"
record "5. run + view" "$t"

echo "== 6. train it (async GRPO on the local engine; the bundled task starts under-confident)"
t=$(now)
"$bin/areal-devkit" train myproj.workflow.arithmetic:ArithmeticWorkflow --steps "$train_steps" \
  --plot "$out/reward.png" --metrics-out "$out/metrics.jsonl" --output "$out/trained_episodes.jsonl" --quiet
echo "the reward curve is in $out/reward.png"
record "6. train" "$t"

echo "== 7. AReaL's agent quick start, renamed (examples/agent_workflow/train.py): the OpenAI math"
echo "   agent through the proxy, a statistics row per step, an evaluation, files under fileroot"
t=$(now)
cd "$root"
rm -rf "$out/agent_quickstart"
"$bin/python" examples/agent_workflow/train.py \
  --config examples/agent_workflow/config_laptop.yaml \
  total_train_steps="$quick_steps" evaluator.freq_steps="$quick_steps" recover.mode=disabled \
  cluster.fileroot="$out/agent_quickstart"
"$bin/areal-devkit" view "$out"/agent_quickstart/logs/*/agent-quickstart/trial0
record "7. quick start + view" "$t"

echo "== 8. a tool agent learns: the calc agent of step 1 (areal-devkit new calc --variant"
echo "   agent_anthropic), trained for $tool_steps steps beside steps 2-7 (it starts from the embedded"
echo "   model with its logits flattened; RL makes its tool calls right more often)"
status=0
wait "$bg" || status=$?
bg=""
record "8. tool agent (beside 2-7)" "$t8" "$(cat "$work/step8.end" 2>/dev/null || now)"
cat "$work/step8.log"
if [ "$status" != 0 ]; then
  echo "step 8 failed (exit $status)"
  exit "$status"
fi
echo "the tool agent's reward curve is in $out/tool_agent_reward.png; see its calls, tool results"
echo "and answers with: $bin/areal-devkit view $out/tool_agent_episodes.jsonl"

echo "== time of each step (seconds; step 8 ran beside steps 2-7)"
for row in "${timings[@]}"; do
  printf '%-28s %7s\n' "${row%%|*}" "${row##*|}"
done
printf '%-28s %7s\n' "total" "$(awk -v a="$started" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }')"
