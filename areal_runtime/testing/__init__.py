# SPDX-License-Identifier: Apache-2.0
"""Test kit for workflow authors: fixtures, a scripted engine, an offline tokenizer."""
