# SPDX-License-Identifier: Apache-2.0
"""Every config field says what it does, and docs/config_fields.md is rendered from them."""

import dataclasses
from pathlib import Path

import pytest

from areal_runtime.api import experiment_config
from areal_runtime.api.cli_args import GenerationHyperparameters
from areal_runtime.api.config_docs import DOC_PATH, config_classes, render_markdown

ROOT = Path(__file__).resolve().parents[3]


def test_every_config_class_is_on_the_page():
    covered = set(config_classes())
    defined = {
        obj
        for obj in vars(experiment_config).values()
        if isinstance(obj, type)
        and dataclasses.is_dataclass(obj)
        and obj.__module__ == experiment_config.__name__
        and not obj.__name__.startswith("_")
        and obj.__name__ not in ("PPOConfig", "BaseExperimentConfig")  # fields on GRPOConfig
    }
    assert defined - covered == set()
    assert GenerationHyperparameters in covered


@pytest.mark.parametrize("cls", config_classes(), ids=lambda cls: cls.__name__)
def test_every_field_has_help_text(cls):
    missing = [f.name for f in dataclasses.fields(cls) if not f.metadata.get("help", "").strip()]
    assert missing == [], f"{cls.__name__} fields without metadata['help']: {missing}"


def test_the_docs_page_is_rendered_from_the_fields():
    page = (ROOT / DOC_PATH).read_text()
    assert page == render_markdown(), (
        f"{DOC_PATH} is stale: python -m areal_runtime.api.config_docs > {DOC_PATH}"
    )
    # Each field appears with its help text and the ignored ones are marked.
    for cls in config_classes():
        for f in dataclasses.fields(cls):
            mark = "**ignored**. " if f.metadata.get("ignored") else ""
            assert f"| {mark}{f.metadata['help'].replace('|', chr(92) + '|')} |" in page
