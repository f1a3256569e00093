# SPDX-License-Identifier: Apache-2.0
"""Workflows AReaL ships (``areal.workflow``), for scripts that name them by import string."""
