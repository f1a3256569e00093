# SPDX-License-Identifier: Apache-2.0
"""areal-devkit, the tool: the ``areal-devkit`` command, the scaffolding and the template.

The linter lives in :mod:`areal_lint` and AReaL's API with what runs it in :mod:`areal_runtime`;
this package only ties them into commands a person types.
"""

__version__ = "0.3.0"
