#!/usr/bin/env bash
# The README's main job, on the embedded default model:
#   1. scaffold a workflow into a copy of the bundled example project (areal-devkit new),
#   2. lint it (areal-lint), 3. run its generated tests (pytest),
#   4. run it on the embedded default model and the bundled dataset (areal-devkit run),
#      writing the trajectories and the viewer page to demo_output/,
#   5. train it for a minute (areal-devkit train): the reward table and the reward plot,
#   6. AReaL's agent quick start, renamed,
#   7. a tool agent (Anthropic SDK, a tool call, its result, the answer) learning to use its tool.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out="$root/demo_output"
mkdir -p "$out"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp -r examples/seed_projects/lazy_project "$work/project"
cd "$work/project"

echo "== 1. scaffold: areal-devkit new arithmetic --variant rlvr --package myproj.workflow"
"$root/.venv/bin/areal-devkit" new arithmetic --variant rlvr --package myproj.workflow

echo "== 2. lint: areal-lint myproj tests"
"$root/.venv/bin/areal-lint" myproj tests && echo "areal-lint: no findings"

echo "== 3. generated tests"
"$root/.venv/bin/python" -m pytest -q -p no:cacheprovider tests/test_arithmetic_workflow.py

echo "== 4. run on the embedded default model (bundled arithmetic dataset)"
"$root/.venv/bin/areal-devkit" run myproj.workflow.arithmetic:ArithmeticWorkflow \
  --kwargs '{"reward_fn": "areal_runtime.models.default_model.arithmetic_reward"}' \
  --output "$out/trajectories.jsonl" --html "$out/episodes.html"
echo "open $out/episodes.html in a browser to see every episode's tokens"

echo "== 5. train it (async GRPO on the local engine; the bundled task starts under-confident)"
"$root/.venv/bin/areal-devkit" train myproj.workflow.arithmetic:ArithmeticWorkflow --steps 60 \
  --plot "$out/reward.png" --metrics-out "$out/metrics.jsonl" --output "$out/trained_episodes.jsonl" --quiet
echo "the reward curve is in $out/reward.png"

echo "== 6. AReaL's agent quick start, renamed (examples/agent_workflow/train.py): the OpenAI math"
echo "   agent through the proxy, a statistics row per step, an evaluation, files under fileroot"
cd "$root"
rm -rf "$out/agent_quickstart"
"$root/.venv/bin/python" examples/agent_workflow/train.py \
  --config examples/agent_workflow/config_laptop.yaml \
  total_train_steps=20 evaluator.freq_steps=20 recover.mode=disabled \
  cluster.fileroot="$out/agent_quickstart"
"$root/.venv/bin/areal-devkit" view "$out"/agent_quickstart/logs/*/agent-quickstart/trial0

echo "== 7. a tool agent learns: areal-devkit new calc --variant agent_anthropic, then train it"
echo "   (the embedded model calls tools, imperfectly; RL makes its calls right more often)"
cd "$work/project"
"$root/.venv/bin/areal-devkit" new calc --variant agent_anthropic --package myproj.workflow
"$root/.venv/bin/areal-devkit" train myproj.workflow.calc:CalcAgent --steps 50 \
  --plot "$out/tool_agent_reward.png" --output "$out/tool_agent_episodes.jsonl" --quiet
echo "the tool agent's reward curve is in $out/tool_agent_reward.png; see its calls, tool results"
echo "and answers with: $root/.venv/bin/areal-devkit view $out/tool_agent_episodes.jsonl"
