# SPDX-License-Identifier: Apache-2.0
"""AReaL's CAMEL-AI model backend (``areal.experimental.camel``): see ``openai_model``."""
