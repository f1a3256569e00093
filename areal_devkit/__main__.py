# SPDX-License-Identifier: Apache-2.0
"""``python -m areal_devkit``: the same as the ``areal-devkit`` command."""

import sys

from areal_devkit.cli import main

sys.exit(main())
