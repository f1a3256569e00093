# SPDX-License-Identifier: Apache-2.0
"""pytest plugin (entry point ``pytest11``) that provides areal_runtime's fixtures."""
