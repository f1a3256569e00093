# SPDX-License-Identifier: Apache-2.0
import importlib.util

# tests/parity imports the real AReaL next to areal_runtime; it runs under .venv-areal
# (`make parity`). Where `areal` is not installed (the main .venv) it is not collected at all,
# rather than collected and skipped, so a skip can never hide a parity failure.
collect_ignore = [] if importlib.util.find_spec("areal") is not None else ["parity"]
# tests/camel needs camel-ai, which pins an older pydantic: it runs under .venv-camel only.
if importlib.util.find_spec("camel") is None:
    collect_ignore.append("camel")


def pytest_addoption(parser):
    parser.addoption("--generate-autofix", action="store_true", help="rewrite autofix snapshots")
