# SPDX-License-Identifier: Apache-2.0
"""A minimal project shaped like AReaL: workflows exported lazily from ``myproj.workflow``."""
