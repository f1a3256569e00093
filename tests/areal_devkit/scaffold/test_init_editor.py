# SPDX-License-Identifier: Apache-2.0
"""The ``__init__.py`` editor on input/expected file pairs; refused shapes stay untouched."""

import shutil
from pathlib import Path

import pytest

from areal_devkit.scaffold.init_editor import InitEditError, detect_style, register_export

CASES = Path(__file__).parent / "init_cases"
EDITED = sorted(
    p
    for p in CASES.glob("*.py")
    if not p.name.endswith(".expected.py") and not p.name.startswith("refused_")
)
REFUSED = sorted(CASES.glob("refused_*.py"))


@pytest.mark.parametrize("case", EDITED, ids=lambda p: p.stem)
def test_edit_gives_the_expected_file_and_is_idempotent(case, tmp_path):
    init = tmp_path / "__init__.py"
    shutil.copy(case, init)
    assert register_export(init, "CalcWorkflow", "pkg.workflow.calc") is True
    assert init.read_text() == case.with_name(case.stem + ".expected.py").read_text()
    assert register_export(init, "CalcWorkflow", "pkg.workflow.calc") is False  # again: no change
    assert init.read_text() == case.with_name(case.stem + ".expected.py").read_text()


@pytest.mark.parametrize("case", REFUSED, ids=lambda p: p.stem)
def test_shapes_it_cannot_edit_safely_are_refused_untouched(case, tmp_path):
    init = tmp_path / "__init__.py"
    shutil.copy(case, init)
    with pytest.raises(InitEditError):
        register_export(init, "CalcWorkflow", "pkg.workflow.calc")
    assert init.read_text() == case.read_text()
    assert [p.name for p in tmp_path.iterdir()] == ["__init__.py"]  # no temp file left


def test_styles():
    assert [detect_style((CASES / f"{n}.py").read_text()) for n in ("lazy", "eager", "empty")] == [
        "lazy",
        "eager",
        "empty",
    ]
