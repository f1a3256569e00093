# SPDX-License-Identifier: Apache-2.0
"""Example workflows for areal-devkit."""
