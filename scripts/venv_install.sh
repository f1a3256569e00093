# Sourced by the set-up scripts (bootstrap.sh, areal_env.sh, camel_env.sh). Two steps:
#   torch_and_uv VENV        uv with pip, then torch (pinned): the CPU wheel on disk with uv
#   uv_install VENV ARG...   everything else, with uv, under scripts/constraints.txt
# Why uv: on a fresh machine pip took 78 s to resolve and unpack .venv's ~140 packages after
# torch, uv 7 s (BENCHMARKS.md, "Set-up with uv"). torch's CPU build lies on this machine's disk,
# where only pip looks (pip.conf's find-links): uv is given that file by its path, and asked for
# torch by name it would take PyPI's CUDA build. Once torch 2.13.0 is installed, the pin in
# scripts/constraints.txt holds uv to it.

# pip's warnings about the machine's local index folders say nothing about this project.
_quiet_pip() {
  local venv=$1
  shift
  "$venv/bin/python" -m pip "$@" 2>&1 | { grep -v "^WARNING: Location " || true; }
}

# Byte-code: pip compiles every file it installs, uv none. Where Python caches byte-code on first
# import (its default), compiling torch at install is wasted work (2,285 modules, 28 s of CPU per
# venv), so torch is installed without it. Where PYTHONDONTWRITEBYTECODE is set nothing is cached
# and each process would compile torch again (an import 4.3-5.1 s instead of 2.1-2.4), so torch
# is compiled at install; compiling uv's other packages too cost the demo more at set-up (+33 s)
# than it saved later (-12 s) (BENCHMARKS.md, "Tests and CI").
if [ -n "${PYTHONDONTWRITEBYTECODE:-}" ]; then
  _pip_compile=--compile _uv_compile=--compile-bytecode
else
  _pip_compile=--no-compile _uv_compile=
fi

_torch_version=2.13.0  # as scripts/constraints.txt pins it

# The torch wheel of that version for this venv's Python in pip's find-links folders (where this
# machine keeps its CPU build), or nothing.
_local_torch_wheel() {
  "$1/bin/python" - "$_torch_version" <<'PY'
import glob, os, shlex, subprocess, sys
version = sys.argv[1]
listed = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True)
folders = [os.environ.get("PIP_FIND_LINKS", "")]
folders += [line.split("=", 1)[1] for line in listed.stdout.splitlines() if ".find-links=" in line]
tag = f"cp{sys.version_info.major}{sys.version_info.minor}"
for folder in (f for text in folders for f in shlex.split(text.strip("'\"")) if os.path.isdir(f)):
    for wheel in sorted(glob.glob(os.path.join(folder, f"torch-{version}*-{tag}-*.whl"))):
        print(wheel)
        sys.exit()
PY
}

# uv installs a wheel once into its cache and links it into each venv: torch into the second and
# third venv of a set-up took 0.7 s each with uv against 8.5 s each with pip, and with byte-code
# 7.8 s against 28.9 s (uv compiles on every core). pip installs uv; where no torch wheel lies in
# pip's folders, pip installs torch too (uv would take PyPI's CUDA build).
torch_and_uv() {
  local wheel
  wheel=$(_local_torch_wheel "$1")
  if [ -z "$wheel" ]; then
    _quiet_pip "$1" install -q "$_pip_compile" -c scripts/constraints.txt "torch==$_torch_version" "uv>=0.9"
    return
  fi
  _quiet_pip "$1" install -q -c scripts/constraints.txt "uv>=0.9"
  uv_install "$1" $_uv_compile "$wheel"
}

uv_install() {
  local venv=$1
  shift
  "$venv/bin/uv" pip install -q --python "$venv/bin/python" -c scripts/constraints.txt "$@"
}
