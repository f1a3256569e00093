# SPDX-License-Identifier: Apache-2.0
pytest_plugins = ["pytester"]
