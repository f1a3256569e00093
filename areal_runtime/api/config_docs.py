# SPDX-License-Identifier: Apache-2.0
"""``docs/config_fields.md``, rendered from the config dataclasses' help texts.

``python -m areal_runtime.api.config_docs > docs/config_fields.md`` writes the page; a test
keeps the two equal. Apart from ``config_fields`` (the field makers, which the config modules
import) so that no config module and its helpers import each other.
"""

from __future__ import annotations

import dataclasses
import re
import typing
from typing import Any

from areal_runtime.api import experiment_config as ec

DOC_PATH = "docs/config_fields.md"


def _type_name(tp: Any) -> str:
    """``int | None``, ``ValidDatasetConfig | None``: module paths dropped."""
    text = getattr(tp, "__name__", None) if isinstance(tp, type) else None
    return text or re.sub(r"\b(?:[A-Za-z_]\w*\.)+(\w+)", r"\1", str(tp))


def _default_text(f: dataclasses.Field) -> str:
    if f.default is not dataclasses.MISSING:
        return repr(f.default)
    if f.default_factory is not dataclasses.MISSING:  # type: ignore[misc]
        value = f.default_factory()  # type: ignore[misc]
        return type(value).__name__ + "()" if dataclasses.is_dataclass(value) else repr(value)
    return "required"


def _sections(root: type) -> list[type]:
    """``root`` and every config dataclass it nests, each once, in reading order."""
    seen: list[type] = []

    def visit(cls: type) -> None:
        if cls in seen:
            return
        seen.append(cls)
        hints = typing.get_type_hints(cls)
        for f in dataclasses.fields(cls):
            for tp in (hints[f.name], *typing.get_args(hints[f.name])):
                if dataclasses.is_dataclass(tp):
                    visit(tp)  # type: ignore[arg-type]

    visit(root)
    return seen


def config_classes() -> list[type]:
    """The config dataclasses the docs page covers (everything the experiment configs nest)."""
    out: list[type] = []
    for root in (ec.GRPOConfig, ec.SFTConfig, ec.RWConfig, ec.DPOConfig):
        out.extend(cls for cls in _sections(root) if cls not in out)
    return out


def render_markdown() -> str:
    """``docs/config_fields.md``: one table per config dataclass."""
    lines = [
        "# Config fields",
        "",
        "Generated from the dataclasses in `areal_runtime/api/experiment_config.py` and "
        "`cli_args.py` (`python -m areal_runtime.api.config_docs > "
        f"{DOC_PATH}`); a test keeps the two equal.",
        "",
        "Names, nesting and defaults are AReaL's. **ignored**: accepted so an AReaL YAML loads "
        "unchanged, and reported once when set; it has no effect on one machine (cluster, GPU, "
        "backend and service settings). Required fields in AReaL (`rollout.backend`, "
        "`train_dataset.type`) have a laptop default here.",
    ]
    for cls in config_classes():
        hints = typing.get_type_hints(cls)
        lines += ["", f"## `{cls.__name__}`", ""]
        doc = (cls.__doc__ or "").strip().split("\n\n")[0].replace("\n", " ")
        if doc and not doc.startswith(cls.__name__ + "("):
            lines += [" ".join(doc.split()), ""]
        lines += ["| field | type | default | help |", "|---|---|---|---|"]
        for f in dataclasses.fields(cls):
            text = f.metadata.get("help", "")
            if f.metadata.get("ignored"):
                text = f"**ignored**. {text}"
            row = (f.name, _type_name(hints[f.name]), _default_text(f), text)
            cells = [f"`{row[0]}`", f"`{row[1]}`", f"`{row[2]}`", row[3]]
            cells = [cell.replace("|", "\\|") for cell in cells]
            lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(render_markdown(), end="")
