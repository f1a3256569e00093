# SPDX-License-Identifier: Apache-2.0
"""The shared loopback test and the one lazy re-export helper."""

import subprocess
import sys
import types

import pytest

from areal_runtime.utils.lazy_exports import lazy_exports
from areal_runtime.utils.network import is_loopback


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("localhost", True),
        ("127.0.0.1", True),
        ("127.8.9.10", True),
        ("::1", True),
        ("::1%lo", True),
        ("0.0.0.0", False),
        ("192.168.1.4", False),
        ("example.com", False),
        ("", False),
    ],
)
def test_is_loopback(host, expected):
    assert is_loopback(host) is expected


def test_lazy_exports_import_on_first_access_and_bind_the_name(monkeypatch):
    package = types.ModuleType("fake_pkg")
    monkeypatch.setitem(sys.modules, "fake_pkg", package)
    package.__getattr__, package.__dir__ = lazy_exports("fake_pkg", {"dumps": "json"})
    assert "dumps" in package.__dir__()
    assert "dumps" not in vars(package)
    import json

    assert package.dumps is json.dumps and vars(package)["dumps"] is json.dumps
    with pytest.raises(AttributeError, match="'fake_pkg' has no attribute 'loads'"):
        package.loads  # noqa: B018


def test_the_lazy_packages_stay_cheap_and_resolve_their_names():
    code = (
        "import sys, areal_runtime as r, areal_runtime.api as a, areal_runtime.workflow as w,\\\n"
        "    areal_runtime.trainer as t, areal_runtime.experimental.openai.proxy as p\n"
        "assert not {'torch', 'openai', 'starlette'} & set(sys.modules)\n"
        "assert a.RolloutWorkflow.__module__ == 'areal_runtime.api.workflow_api'\n"
        "assert p.ProxyLimits.__module__.endswith('engine.request_limits')\n"
        "assert 'PPOTrainer' in dir(r) and 'PPOTrainer' in dir(t)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
