# Sourced by the set-up scripts (bootstrap.sh, areal_env.sh, camel_env.sh). Two steps:
#   torch_and_uv VENV        torch (pinned) and uv, with pip
#   uv_install VENV ARG...   everything else, with uv, under scripts/constraints.txt
# Why uv: on a fresh machine pip took 78 s to resolve and unpack .venv's ~140 packages after
# torch, uv 7 s (BENCHMARKS.md, "Set-up with uv"). Why torch by pip: its CPU build lies on this
# machine's disk, where only pip looks (pip.conf's find-links); uv would take the CUDA build from
# PyPI. Once torch 2.13.0 is installed, the pin in scripts/constraints.txt holds uv to it.

# pip's warnings about the machine's local index folders say nothing about this project.
_quiet_pip() {
  local venv=$1
  shift
  "$venv/bin/python" -m pip "$@" 2>&1 | { grep -v "^WARNING: Location " || true; }
}

# --no-compile: pip byte-compiles every file it installs (torch: 2,285 modules, 28 s of CPU per
# venv here) where Python compiles and caches only what is imported, as it does for what uv
# installs (BENCHMARKS.md, "Tests and CI").
torch_and_uv() {
  _quiet_pip "$1" install -q --no-compile -c scripts/constraints.txt "torch==2.13.0" "uv>=0.9"
}

uv_install() {
  local venv=$1
  shift
  "$venv/bin/uv" pip install -q --python "$venv/bin/python" -c scripts/constraints.txt "$@"
}
