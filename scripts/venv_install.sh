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

# Byte-code: where Python caches it on first import (its default), compiling every installed
# file is wasted work (torch alone: 2,285 modules, 28 s of CPU per venv), so nothing is compiled
# at install. Where PYTHONDONTWRITEBYTECODE is set, nothing is ever cached and every process
# would compile what it imports again (torch, transformers and the SDKs: 15-18 s an import
# instead of 8), so everything is compiled at install (BENCHMARKS.md, "Tests and CI").
if [ -n "${PYTHONDONTWRITEBYTECODE:-}" ]; then
  _pip_compile=--compile _uv_compile=--compile-bytecode
else
  _pip_compile=--no-compile _uv_compile=  # (scalars: bash 3.2 has no empty arrays under set -u)
fi

torch_and_uv() {
  _quiet_pip "$1" install -q "$_pip_compile" -c scripts/constraints.txt "torch==2.13.0" "uv>=0.9"
}

uv_install() {
  local venv=$1
  shift
  "$venv/bin/uv" pip install -q --python "$venv/bin/python" ${_uv_compile:+"$_uv_compile"} -c scripts/constraints.txt "$@"
}
