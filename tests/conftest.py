# SPDX-License-Identifier: Apache-2.0
def pytest_addoption(parser):
    parser.addoption("--generate-autofix", action="store_true", help="rewrite autofix snapshots")
