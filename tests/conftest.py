# SPDX-License-Identifier: Apache-2.0
import importlib.util
import os
import tempfile

import pytest

# tests/parity imports the real AReaL next to areal_runtime; it runs under .venv-areal
# (`make parity`). Where `areal` is not installed (the main .venv) it is not collected at all,
# rather than collected and skipped, so a skip can never hide a parity failure.
collect_ignore = [] if importlib.util.find_spec("areal") is not None else ["parity"]
# tests/camel needs camel-ai, which pins an older pydantic: it runs under .venv-camel only.
if importlib.util.find_spec("camel") is None:
    collect_ignore.append("camel")


# Every Claude Code CLI the tests start (the SDK passes this environment on) keeps its state in a
# folder of this run, not in the user's ~/.claude, and never tries to update or check its
# installation: parallel runs and a developer's own Claude Code must not meet.
os.environ.setdefault("CLAUDE_CONFIG_DIR", tempfile.mkdtemp(prefix="areal-devkit-claude-"))
os.environ.setdefault("DISABLE_AUTOUPDATER", "1")
os.environ.setdefault("DISABLE_INSTALLATION_CHECKS", "1")


def pytest_addoption(parser):
    parser.addoption("--generate-autofix", action="store_true", help="rewrite autofix snapshots")


def pytest_collection_modifyitems(config, items):
    """Under pytest-xdist (``make test`` runs ``-n auto --dist loadgroup``), the tests of a module
    with a module-scoped fixture (a baked project, a loaded model, a started browser) run on one
    worker, so that fixture is built once rather than once per worker."""
    if not config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:
        defs = getattr(item, "_fixtureinfo", None)
        if defs is None:
            continue
        if any(chain and chain[-1].scope == "module" for chain in defs.name2fixturedefs.values()):
            item.add_marker(pytest.mark.xdist_group(item.module.__name__))
