# SPDX-License-Identifier: Apache-2.0
"""Helpers mirroring ``areal.utils``: tensor utilities, logging, stats and tracing."""
