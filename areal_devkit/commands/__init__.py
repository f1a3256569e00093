# SPDX-License-Identifier: Apache-2.0
"""One module per ``areal-devkit`` subcommand, each with ``add_parser(commands)``.

Modules import nothing heavy at import time, so ``areal-devkit --help`` and ``new`` work from
the base install (no torch).
"""
