# SPDX-License-Identifier: Apache-2.0
"""``docs/proxy_fields.md``: every API's ``FIELDS`` table, rendered; a test keeps them equal.

Regenerate with ``python -m areal_runtime.experimental.openai.proxy.field_docs > docs/proxy_fields.md``.
"""

from __future__ import annotations

from areal_runtime.experimental.openai.proxy.apis import APIS
from areal_runtime.experimental.openai.proxy.field_policy import DOC_PATH

_ORDER = ("used", "ignored", "refused")


def render_markdown() -> str:
    """The docs page: the handling kinds, then one table per API."""
    lines = [
        "# Request fields the agent proxy accepts",
        "",
        "Generated from the `FIELDS` table of each API adapter in "
        "`areal_runtime/experimental/openai/proxy/apis/` "
        "(`python -m areal_runtime.experimental.openai.proxy.field_docs > "
        f"{DOC_PATH}`); a test keeps the two equal.",
        "",
        "The proxy records the tokens the engine sampled. **used**: the proxy honours the "
        "field. **ignored**: accepted with any value, and it cannot change which tokens are "
        "sampled. **refused**: HTTP 400 naming the field for the values in *refused when*: "
        "honouring them was the client's premise, and the recorded trajectory would differ "
        "from what the client believes it got; its other values are accepted. Only refused "
        "fields ever get that 400. Fields not listed are refused whatever their value.",
    ]
    for api in APIS.values():
        lines += ["", f"## `{api.route}`", "", "| field | handling | refused when | why |"]
        lines.append("|---|---|---|---|")
        for rule in sorted(api.fields, key=lambda r: (_ORDER.index(r.handling), r.field)):
            refused = rule.refused_when or "never"
            lines.append(f"| `{rule.field}` | {rule.handling} | {refused} | {rule.why} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(render_markdown(), end="")
