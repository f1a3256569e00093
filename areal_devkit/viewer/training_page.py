# SPDX-License-Identifier: Apache-2.0
"""The training page: a run's ``stats.jsonl`` (the stats logger's file) as curves, no network.

``areal-devkit view FILEROOT/logs/USER/EXPERIMENT/TRIAL`` (or the ``stats.jsonl`` in it) writes
one HTML page with an SVG chart per AReaL statistic: reward, evaluation reward, advantages,
importance weights, clipping, entropy, staleness, lengths and seconds per step.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from areal_devkit import runtime_facade as runtime
from areal_devkit.errors import UsageError

CHARTS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("reward (train)", ("ppo_actor/task_reward/avg",)),
    ("reward (evaluation)", ("eval-rollout/reward",)),
    ("advantages", ("ppo_actor/advantages/max", "ppo_actor/advantages/min")),
    (
        "importance weight",
        ("ppo_actor/update/importance_weight/avg", "ppo_actor/update/importance_weight/max"),
    ),
    ("clip ratio", ("ppo_actor/update/clip_ratio/avg",)),
    ("entropy", ("ppo_actor/update/entropy/avg",)),
    ("approx KL", ("ppo_actor/update/approx_kl/avg",)),
    (
        "staleness (versions)",
        ("ppo_actor/update/version_stats/sample_staleness_theta_avg",),
    ),
    ("sequence length", ("ppo_actor/seq_len/avg",)),
    ("seconds per step", ("timeperf/step", "timeperf/train_step", "timeperf/rollout")),
)
COLOURS = ("#1f77b4", "#d62728", "#2ca02c")


def is_stats_source(path: Path) -> bool:
    """A log folder holding ``stats.jsonl``, or a ``stats.jsonl`` itself."""
    name = runtime.STATS_FILE
    return (path.is_dir() and (path / name).is_file()) or path.name == name


def line_chart(
    title: str, series: dict[str, list[tuple[float, float]]], width: int = 420, height: int = 170
) -> str:
    """One SVG chart: a polyline per series, min/max labels on the y axis."""
    points = [p for values in series.values() for p in values]
    if not points:
        return ""
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    x0, x1 = min(xs), max(xs)
    y0, y1 = min(ys), max(ys)
    if y1 == y0:
        y0, y1 = y0 - 0.5, y1 + 0.5
    left, right, top, bottom = 48, 8, 22, 20

    def sx(x: float) -> float:
        return left + (x - x0) / ((x1 - x0) or 1) * (width - left - right)

    def sy(y: float) -> float:
        return top + (1 - (y - y0) / (y1 - y0)) * (height - top - bottom)

    parts = [
        f'<svg class="chart" width="{width}" height="{height}" role="img" '
        f'aria-label="{html.escape(title)}">',
        f'<text x="{left}" y="14" font-size="12" font-weight="bold">{html.escape(title)}</text>',
        f'<text x="2" y="{top + 8}" font-size="10">{y1:.3g}</text>',
        f'<text x="2" y="{height - bottom}" font-size="10">{y0:.3g}</text>',
        f'<text x="{left}" y="{height - 4}" font-size="10">step {x0:g}</text>',
        f'<text x="{width - 60}" y="{height - 4}" font-size="10">step {x1:g}</text>',
    ]
    for (name, values), colour in zip(series.items(), COLOURS, strict=False):
        coords = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in values)
        parts.append(
            f'<polyline fill="none" stroke="{colour}" stroke-width="1.5" points="{coords}">'
            f"<title>{html.escape(name)}</title></polyline>"
        )
        if len(values) == 1:
            x, y = values[0]
            parts.append(f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="3" fill="{colour}"/>')
    parts.append("</svg>")
    legend = " ".join(
        f'<span style="color:{c}">&#9632; {html.escape(n)}</span>'
        for n, c in zip(series, COLOURS, strict=False)
    )
    return f"<figure>{''.join(parts)}<figcaption>{legend}</figcaption></figure>"


def render_training_page(rows: list[dict[str, Any]], title: str) -> str:
    charts = []
    for name, keys in CHARTS:
        series = {
            key: [
                (float(r["global_step"]), float(r[key]))
                for r in rows
                if isinstance(r.get(key), int | float)
            ]
            for key in keys
        }
        charts.append(line_chart(name, {k: v for k, v in series.items() if v}))
    last = rows[-1] if rows else {}
    summary = (
        f"{len(rows)} steps; last step {last.get('global_step', '-')}, "
        f"epoch {last.get('epoch', '-')}"
    )
    return (
        "<!doctype html><html><head><meta charset='utf-8'>"
        f"<title>{html.escape(title)}</title>"
        "<style>body{font-family:sans-serif;margin:16px}figure{display:inline-block;"
        "margin:6px}figcaption{font-size:11px}</style></head><body>"
        f"<h1>{html.escape(title)}</h1><p>{html.escape(summary)}</p>"
        + "".join(c for c in charts if c)
        + "</body></html>"
    )


def write_training_page(source: Path, target: Path) -> int:
    """Write the page for ``source`` (a log folder or stats.jsonl); returns the step count."""
    rows = runtime.read_stats(source)
    if not rows:
        raise UsageError(f"{source} has no statistics yet (no complete line in stats.jsonl)")
    target.write_text(render_training_page(rows, f"areal-devkit: {source}"), encoding="utf-8")
    return len(rows)
