# SPDX-License-Identifier: Apache-2.0
"""Headless Chromium for the viewer's tests and benchmark: the rendered DOM and screenshots."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

CANDIDATES = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
INSTALL_FAILED_MARKER = Path(tempfile.gettempdir()) / "areal-devkit-chromium-unavailable"


def find_chromium() -> str | None:
    override = os.environ.get("AREAL_DEVKIT_CHROMIUM")
    if override:
        return override
    return next((path for name in CANDIDATES if (path := shutil.which(name))), None)


def _flags(profile: str) -> list[str]:
    # --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
    return [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-extensions",
        f"--user-data-dir={profile}",
    ]


def dump_dom(chromium: str, url: str, timeout_s: float = 60) -> str:
    """The page's DOM after its scripts ran (``--dump-dom``)."""
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.run(
            [chromium, *_flags(profile), "--dump-dom", url],
            capture_output=True,
            text=True,
            timeout=timeout_s,
        )
    if proc.returncode != 0:
        raise RuntimeError(f"chromium failed ({proc.returncode}): {proc.stderr[-2000:]}")
    return proc.stdout


def screenshot(chromium: str, url: str, out: Path, size: str = "1200,800") -> None:
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run(
            [chromium, *_flags(profile), f"--screenshot={out}", f"--window-size={size}", url],
            capture_output=True,
            check=True,
            timeout=60,
        )
