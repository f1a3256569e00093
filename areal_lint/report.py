# SPDX-License-Identifier: Apache-2.0
"""Output formats: text, json, GitHub Actions annotations, SARIF 2.1.0; ``--statistics``."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from areal_lint import __version__

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
# Formats read by programs: stdout holds nothing else (see ``cli._write_report``).
MACHINE_FORMATS = ("json", "sarif", "github")


def _title(code: str) -> str:
    from areal_lint.rules import RULES_BY_CODE  # only when there is something to describe

    rule = RULES_BY_CODE.get(code)
    doc = (rule.__doc__ or "") if rule else ""
    first = doc.strip().splitlines()[0] if doc.strip() else code
    return first.removeprefix(code).strip().rstrip(".") or code


def text(findings: list[dict[str, Any]]) -> str:
    return "".join(
        f"{f['path']}:{f['line']}:{f['col']}: {f['code']} {f['message']}\n" for f in findings
    )


def _escape_data(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(value: str) -> str:
    return _escape_data(value).replace(":", "%3A").replace(",", "%2C")


def github(findings: list[dict[str, Any]]) -> str:
    """One ``::error`` workflow command per finding: GitHub shows it on the diff line."""
    lines = []
    for f in findings:
        props = (
            f"file={_escape_property(f['path'])},line={f['line']},col={f['col']},"
            f"endLine={f['end_line']},endColumn={f['end_col']},title={f['code']}"
        )
        lines.append(f"::error {props}::{_escape_data(f['code'] + ' ' + f['message'])}\n")
    return "".join(lines)


def sarif(findings: list[dict[str, Any]]) -> str:
    """A SARIF 2.1.0 log with one run: the rules that fired and one result per finding."""
    codes = sorted({f["code"] for f in findings})
    index = {code: i for i, code in enumerate(codes)}
    rules = [
        {
            "id": code,
            "name": code,
            "shortDescription": {"text": _title(code)},
        }
        for code in codes
    ]
    results = [
        {
            "ruleId": f["code"],
            "ruleIndex": index[f["code"]],
            "level": "error",
            "message": {"text": f["message"]},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": Path(f["path"]).as_posix()},
                        "region": {
                            "startLine": f["line"],
                            "startColumn": f["col"],
                            "endLine": max(f["end_line"], f["line"]),
                            "endColumn": f["end_col"],
                        },
                    }
                }
            ],
        }
        for f in findings
    ]
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "areal-lint",
                        "version": __version__,
                        "rules": rules,
                    }
                },
                "columnKind": "unicodeCodePoints",
                "results": results,
            }
        ],
    }
    return json.dumps(log, indent=2) + "\n"


def statistics(findings: list[dict[str, Any]]) -> str:
    """How many findings per code, most first, with the rule's title."""
    counts = Counter(f["code"] for f in findings)
    return "".join(
        f"{n:5d}  {code}  {_title(code)}\n"
        for code, n in sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    )


def render(fmt: str, findings: list[dict[str, Any]]) -> str:
    """The findings in one of the ``--format`` choices."""
    if fmt == "json":
        return json.dumps(findings, indent=2) + "\n"
    if fmt == "github":
        return github(findings)
    if fmt == "sarif":
        return sarif(findings)
    return text(findings)
