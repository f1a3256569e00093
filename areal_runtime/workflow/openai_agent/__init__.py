# SPDX-License-Identifier: Apache-2.0
"""AReaL's OpenAI Agents SDK handoff workflow (``areal.workflow.openai_agent``)."""
