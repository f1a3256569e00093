# SPDX-License-Identifier: Apache-2.0
"""AReaL's OpenAI-SDK agent workflows (``areal.workflow.openai``): see ``math_agent``."""
