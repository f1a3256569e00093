# SPDX-License-Identifier: Apache-2.0
"""The reward each variant starts at and reaches is stated in three places, and they agree."""

from pathlib import Path

from areal_devkit.scaffold.variants import VARIANTS
from benchmarks.reward_figures import (
    page_figures,
    readme_figures,
    replace_figures,
    template_figures,
)

ROOT = Path(__file__).parents[2]


def test_readme_and_generated_tests_say_what_the_page_measured():
    page = page_figures(ROOT)
    assert set(page) == set(VARIANTS)
    rounded = {v: (f"{float(a):.2f}", f"{float(b):.2f}") for v, (a, b, _) in page.items()}
    assert readme_figures(ROOT) == rounded
    assert template_figures(ROOT) == {v: (a, b) for v, (a, b, _) in page.items()}


def test_the_bench_writes_all_three_places(tmp_path):
    for path in ["docs/own_project.md", "README.md"]:
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text((ROOT / path).read_text())
    templates = ROOT / "areal_devkit/template/templates/tests"
    (tmp_path / templates.relative_to(ROOT)).mkdir(parents=True)
    for src in templates.glob("*.py.jinja"):
        (tmp_path / src.relative_to(ROOT)).write_text(src.read_text())
    changed = replace_figures(tmp_path, {"agent_anthropic": ("0.123", "0.456", "1 of 20")})
    assert len(changed) == 3
    assert page_figures(tmp_path)["agent_anthropic"] == ("0.123", "0.456", "1 of 20")
    assert readme_figures(tmp_path)["agent_anthropic"] == ("0.12", "0.46")
    assert template_figures(tmp_path)["agent_anthropic"] == ("0.123", "0.456")
    assert page_figures(tmp_path)["rlvr"] == page_figures(ROOT)["rlvr"]  # the rest untouched
