# SPDX-License-Identifier: Apache-2.0
"""The embedded default model and offline tokenizers: no model hub needed, ever."""
