#!/usr/bin/env bash
# The README's main job: run the example workflow on the embedded default model.
set -euo pipefail
cd "$(dirname "$0")/.."
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
.venv/bin/areal-devkit run examples.arithmetic_rlvr:ArithmeticRLVRWorkflow --output /tmp/areal-demo-trajectories.pt
