# SPDX-License-Identifier: Apache-2.0
import pytest


@pytest.fixture(autouse=True)
def _own_lint_cache(tmp_path_factory, monkeypatch):
    """Each test lints with an empty cache of its own: never results a run before it stored."""
    monkeypatch.setenv("AREAL_LINT_CACHE_DIR", str(tmp_path_factory.mktemp("lint-cache")))
