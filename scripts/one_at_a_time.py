# SPDX-License-Identifier: Apache-2.0
"""Run a command while holding an exclusive lock on a file: ``one_at_a_time.py LOCK CMD...``.

Why: scripts/setup_envs.sh builds the three virtualenvs side by side, and an editable install
writes ``areal_devkit.egg-info`` into the checkout (entry points, sources) non-atomically; two at
once could hand one venv a half-written file. The lock is the kernel's (flock), so a killed
set-up never leaves it held.
"""

from __future__ import annotations

import fcntl
import subprocess
import sys


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("usage: one_at_a_time.py LOCKFILE COMMAND [ARG...]", file=sys.stderr)
        return 2
    with open(argv[0], "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return subprocess.call(argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
