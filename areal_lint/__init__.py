# SPDX-License-Identifier: Apache-2.0
"""areal_lint: a libcst-based flake8 plugin for async AReaL rollout workflows."""

__version__ = "0.3.0"
