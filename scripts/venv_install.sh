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

# Byte-code: pip compiles every file it installs, uv none. Where Python caches byte-code on first
# import (its default), pip's compiling of torch is wasted work (2,285 modules, 28 s of CPU per
# venv), so torch is installed without it. Where PYTHONDONTWRITEBYTECODE is set nothing is cached
# and each process would compile torch again (an import 4.3-5.1 s instead of 2.1-2.4), so pip
# compiles it as usual; compiling uv's packages too cost the demo more at set-up (+33 s) than it
# saved later (-12 s) (BENCHMARKS.md, "Tests and CI").
if [ -n "${PYTHONDONTWRITEBYTECODE:-}" ]; then _pip_compile=--compile; else _pip_compile=--no-compile; fi

torch_and_uv() {
  _quiet_pip "$1" install -q "$_pip_compile" -c scripts/constraints.txt "torch==2.13.0" "uv>=0.9"
}

uv_install() {
  local venv=$1
  shift
  "$venv/bin/uv" pip install -q --python "$venv/bin/python" -c scripts/constraints.txt "$@"
}
