# SPDX-License-Identifier: Apache-2.0
"""AReaL's training service (controller v2) path; see ``controller/controller.py``."""
