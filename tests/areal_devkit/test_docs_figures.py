# SPDX-License-Identifier: Apache-2.0
"""Every figure the docs state about the embedded default model comes from the shipped model.

Found: docs/runtime.md said 512 positions in one place and 65,536 in another. The figures are
read from the model's config.json and its weights' header (what ``LocalEngine.default()``
loads), so a retrained or resized model fails this test until the pages say the new numbers.
"""

from __future__ import annotations

import json
import math
import re
import struct
import sys
from pathlib import Path

import pytest

from areal_runtime.models.default_model import MODEL_DIR

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", ROOT / "BENCHMARKS.md", *sorted((ROOT / "docs").glob("*.md"))]


def shipped_config() -> dict:
    return json.loads((MODEL_DIR / "config.json").read_text())


def shipped_parameters() -> int:
    """Parameters in the shipped weights, from the safetensors header (no torch needed)."""
    with (MODEL_DIR / "model.safetensors").open("rb") as f:
        (size,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(size))
    return sum(math.prod(t["shape"]) for name, t in header.items() if name != "__metadata__")


def figures(pattern: str) -> list[tuple[str, str]]:
    """``(page:line, figure)`` for every match of ``pattern`` (one group) on every page."""
    found = []
    for page in PAGES:
        for number, line in enumerate(page.read_text().splitlines(), start=1):
            for match in re.finditer(pattern, line):
                found.append((f"{page.name}:{number}", match.group(1)))
    return found


def as_int(figure: str) -> int:
    figure = figure.replace(",", "")
    return int(figure[:-1]) * 1024 if figure.endswith("k") else int(figure)


def test_every_stated_position_count_is_the_models():
    stated = figures(r"(?<![\d.])\b(\d[\d,]*k?) positions\b")
    assert stated, "the docs state the embedded model's positions somewhere"
    want = shipped_config()["max_position_embeddings"]
    wrong = [(where, f) for where, f in stated if as_int(f) != want]
    assert wrong == [], f"the embedded model has {want} positions"


def test_every_stated_parameter_count_is_the_models():
    stated = figures(r"\b(\d+(?:\.\d+)?)M-parameter\b")
    assert stated
    want = f"{shipped_parameters() / 1e6:.1f}"
    assert [(where, f) for where, f in stated if f != want] == [], f"{want}M parameters"


def test_every_stated_vocabulary_size_is_the_models():
    stated = figures(r"\b(\d[\d,]*)-token vocabulary\b")
    assert stated
    want = shipped_config()["vocab_size"]
    assert [(where, f) for where, f in stated if as_int(f) != want] == [], f"{want} tokens"


@pytest.mark.parametrize(
    ("figure", "check"),
    [
        ("has 512 positions", test_every_stated_position_count_is_the_models),
        ("a 0.1M-parameter model", test_every_stated_parameter_count_is_the_models),
        ("a 64-token vocabulary", test_every_stated_vocabulary_size_is_the_models),
    ],
)
def test_a_wrong_figure_is_caught(figure, check, monkeypatch, tmp_path):
    page = tmp_path / "page.md"
    page.write_text(f"The embedded model: {figure}.\n")
    monkeypatch.setattr(sys.modules[__name__], "PAGES", [page])
    with pytest.raises(AssertionError, match=r"page\.md:1"):
        check()
