# SPDX-License-Identifier: Apache-2.0
"""Generate docs/lint_rules.md from the rule classes: ``python -m areal_lint.docs_gen``.

Rules are listed by code, so the page reads in the order users look codes up; ``--check``
fails when the page is out of date (for CI and the tests).
"""

from __future__ import annotations

import inspect
import sys
from pathlib import Path

from areal_lint.aliases import ALIASES, aliases_of
from areal_lint.analysis.async_clients import render_table
from areal_lint.rules import ALL_RULES

SECTIONS = ("What", "Why", "Example", "Fix")
TARGET = Path(__file__).resolve().parents[1] / "docs" / "lint_rules.md"


def rule_sections(rule: type) -> dict[str, str]:
    """The What/Why/Example/Fix paragraphs of a rule's docstring."""
    doc = inspect.getdoc(rule) or ""
    title, _, body = doc.partition("\n")
    sections: dict[str, str] = {"title": title.strip()}
    current = None
    for line in body.splitlines():
        head, sep, rest = line.partition(":")
        if sep and head.strip() in SECTIONS:
            current = head.strip()
            sections[current] = rest.strip()
        elif current:
            sections[current] = (sections[current] + " " + line.strip()).strip()
    return sections


def render() -> str:
    lines = [
        "# areal-lint rules",
        "",
        "Generated from the rule classes by `python -m areal_lint.docs_gen`; do not edit by hand.",
        "",
        "| code | rule | autofix | default |",
        "|---|---|---|---|",
    ]
    rules = sorted(ALL_RULES, key=lambda rule: rule.code)
    for rule in rules:
        s = rule_sections(rule)
        lines.append(
            f"| [{rule.code}](#{rule.code.lower()}) | {s['title'].removeprefix(rule.code).strip().rstrip('.')} | {rule.fix or '-'} | {'off (opt-in)' if rule.opt_in else 'on'} |"
        )
    for rule in rules:
        s = rule_sections(rule)
        lines += [
            "",
            f"## {rule.code}",
            "",
            f"**{s['title'].removeprefix(rule.code).strip().rstrip('.')}**",
            "",
        ]
        lines.append(f"Message: `{rule.code} {rule.message}`")
        for section in SECTIONS:
            lines += ["", f"*{section}.* {s.get(section, '')}"]
        others = sorted(aliases_of(rule.code))
        if others:
            lines += ["", f"*flake8-async / ruff.* {', '.join(others)} (see the table below)."]
        for code, why in sorted(rule.also_with.items()):
            lines += ["", f"*Also after {code}* on the same construct: {why}."]
    lines += [
        "",
        "## Async clients",
        "",
        "ARL201-203 know these coroutine methods (`areal_lint/analysis/async_clients.py`). A "
        "client is followed through assignments, `self` attributes (`self.client = "
        "httpx.AsyncClient()` in `__init__`), annotations and awaited results (`await "
        "workflow_context.get_httpx_client()`; `await session.post(url)` and `async with "
        "session.post(url) as resp` give an `aiohttp.ClientResponse`). Resource methods are "
        "matched any attributes below the client (`client.chat.completions.create`).",
        "",
        *render_table(),
    ]
    lines += [
        "",
        "## flake8-async and ruff codes",
        "",
        "`# noqa: CODE`, `--select` and `--ignore` (and `[tool.areal-lint]`'s `select`, "
        "`ignore`, `per-file-ignores`) accept these codes and read them as the ARL rule that "
        "reports the same construct; the CLI prints a note the first time, saying how it read "
        "each one. "
        "ruff re-implements flake8-async under the same ASYNC numbers.",
        "",
        "| flake8-async / ruff | ARL | what both report |",
        "|---|---|---|",
        *(f"| {other} | {arl} | {what} |" for other, (arl, what) in sorted(ALIASES.items())),
    ]
    return "\n".join(lines) + "\n"


def main() -> int:
    text = render()
    if "--check" in sys.argv:
        if not TARGET.exists() or TARGET.read_text() != text:
            print(f"{TARGET} is out of date; run python -m areal_lint.docs_gen", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(text)
    print(f"wrote {TARGET}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
