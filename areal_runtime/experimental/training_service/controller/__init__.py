# SPDX-License-Identifier: Apache-2.0
"""AReaL's training-service controller path; see ``controller.py``."""
