# SPDX-License-Identifier: Apache-2.0
"""Render the viewer page: the episodes as compact JSON, the histograms as SVG, CSS and JS inline.

Size: tokens are stored as ids with one shared table of the token texts that occur, masks as
``"0011"`` strings and logprobs rounded to 4 decimals, so 1,000 episodes of 512 tokens stay
well under 15 MB. Speed: above 100,000 tokens the page renders an episode's tokens only when it
scrolls into view, so the page is ready in well under a second.
"""

from __future__ import annotations

import html
import json
from importlib import resources
from pathlib import Path
from typing import Any

from areal_devkit.runtime_facade import atomic_write_text
from areal_devkit.viewer.episodes import EpisodeView

ERROR_HEAD_LINES = 12
BINS = 10


# Placeholder tokens of vision-language chat templates (Qwen-VL's and the embedded processor's).
IMAGE_TOKENS = {"<|image_pad|>", "<|vision_start|>", "<|vision_end|>", "<|video_pad|>", "<image>"}
PLAIN, SPECIAL, IMAGE = 0, 1, 2


def _vocab(episodes: list[EpisodeView], tokenizer: Any) -> dict[str, list[Any]]:
    """``{id: [text, kind]}`` for every id the episodes use; kind 1 special, 2 image placeholder."""
    ids = sorted({t for ep in episodes for row in ep.rows for t in row.token_ids})
    special = set(getattr(tokenizer, "all_special_ids", None) or [])
    table = {}
    for tok in ids:
        text = tokenizer.decode([tok], skip_special_tokens=False) if tokenizer else f"<{tok}>"
        kind = IMAGE if text in IMAGE_TOKENS else SPECIAL if tok in special else PLAIN
        table[str(tok)] = [text, kind]
    return table


def _error_head(error: str | None) -> str | None:
    if not error:
        return None
    lines = error.strip().splitlines()
    return "\n".join(lines[-ERROR_HEAD_LINES:])


def _round(value: float | None) -> float | None:
    return None if value is None else round(float(value), 4)


def payload(episodes: list[EpisodeView], tokenizer: Any, title: str) -> dict[str, Any]:
    return {
        "title": title,
        "vocab": _vocab(episodes, tokenizer),
        "episodes": [
            {
                "i": ep.index,
                "a": ep.accepted,
                "r": _round(ep.reward),
                "why": ep.reason,
                "err": _error_head(ep.error),
                "rows": [
                    {
                        "ids": row.token_ids,
                        "m": "".join("1" if m else "0" for m in row.loss_mask),
                        "lp": [round(x, 4) if x else 0 for x in row.logprobs],
                        "v": row.versions,
                        "r": _round(row.reward),
                    }
                    for row in ep.rows
                ],
            }
            for ep in episodes
        ],
    }


def histogram_svg(values: list[float], caption: str, *, width: int = 320, height: int = 110) -> str:
    """A small bar chart of ``values`` in ``BINS`` bins, as inline SVG."""
    if not values:
        return f"<figure><figcaption>{html.escape(caption)}: no data</figcaption></figure>"
    low, high = min(values), max(values)
    span = (high - low) or 1.0
    counts = [0] * BINS
    for v in values:
        counts[min(int((v - low) / span * BINS), BINS - 1)] += 1
    top = max(counts)
    bar = width / BINS
    plot = height - 18
    bars = "".join(
        f'<rect x="{i * bar + 1:.1f}" y="{plot - c / top * plot:.1f}" width="{bar - 2:.1f}" '
        f'height="{c / top * plot:.1f}" fill="#5b7bd5"><title>{c}</title></rect>'
        for i, c in enumerate(counts)
    )
    labels = (
        f'<text x="0" y="{height - 4}" font-size="10">{low:.3g}</text>'
        f'<text x="{width}" y="{height - 4}" font-size="10" text-anchor="end">{high:.3g}</text>'
    )
    return (
        f'<figure><svg width="{width}" height="{height}" role="img" '
        f'aria-label="{html.escape(caption)}">{bars}{labels}</svg>'
        f"<figcaption>{html.escape(caption)} ({len(values)} episodes)</figcaption></figure>"
    )


def _asset(name: str) -> str:
    return resources.files("areal_devkit.viewer").joinpath(name).read_text(encoding="utf-8")


def render_page(
    episodes: list[EpisodeView], tokenizer: Any = None, *, title: str = "areal-devkit trajectories"
) -> str:
    """The whole page as one string: data, charts, styles and script inline."""
    data = json.dumps(payload(episodes, tokenizer, title), separators=(",", ":"))
    data = data.replace("</", "<\\/")  # the JSON must not close its <script> element
    rewards = [ep.reward for ep in episodes if ep.reward is not None]
    lengths = [sum(len(r.token_ids) for r in ep.rows) for ep in episodes if ep.rows]
    accepted = sum(ep.accepted for ep in episodes)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)}</title>
<script>
window.addEventListener("error", function (e) {{
  var box = document.getElementById("script-errors");
  if (box) box.textContent += (e.message || String(e)) + "\\n";
  document.documentElement.dataset.scriptErrors = "1";
}});
document.addEventListener("DOMContentLoaded", function () {{
  document.documentElement.dataset.dcl = performance.now().toFixed(1);
}});
</script>
<style>{_asset("viewer.css")}</style></head>
<body>
<header>
<h1>{html.escape(title)}</h1>
<span>{len(episodes)} episodes · {accepted} accepted · {len(episodes) - accepted} rejected</span>
<label><input type="checkbox" id="show-accepted" checked> accepted</label>
<label><input type="checkbox" id="show-rejected" checked> rejected</label>
<label>reward from <input type="number" id="reward-min" step="any"></label>
<label>to <input type="number" id="reward-max" step="any"></label>
<span id="shown"></span>
<span class="legend"><span class="tok ctx">context (not trained)</span><span class="tok trn">trained</span><span class="tok trn call">tool call</span><span class="tok ctx tool">tool result</span><span class="tok special">special token</span><span class="tok special image">image placeholder</span></span>
</header>
<div class="charts">{histogram_svg(rewards, "reward")}{histogram_svg([float(n) for n in lengths], "length in tokens")}</div>
<pre id="script-errors"></pre>
<div id="tip"></div>
<main id="episodes"></main>
<script type="application/json" id="data">{data}</script>
<script>{_asset("viewer.js")}</script>
</body></html>
"""


def write_page(
    episodes: list[EpisodeView],
    path: Path,
    tokenizer: Any = None,
    *,
    title: str = "areal-devkit trajectories",
) -> None:
    """Write the page atomically: a half-written page never replaces a good one."""
    text = render_page(episodes, tokenizer, title=title)
    atomic_write_text(path, text)
