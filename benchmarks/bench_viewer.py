# SPDX-License-Identifier: Apache-2.0
"""The viewer page at scale: 1,000 episodes of 512 tokens, size and time to ready in Chromium.

Run: ``python benchmarks/bench_viewer.py`` (needs Chromium: ``scripts/install_chromium.sh``).
Goal: under 15 MB and DOMContentLoaded under 3 s in headless Chromium. Prints a Markdown table
of medians over 5 loads; "DOMContentLoaded" is the page's own ``performance.now()`` at that
event, "chromium run" the wall time of the whole headless process (start-up included).
"""

from __future__ import annotations

import random
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

from _util import table

from areal_devkit.trajectory_text import TrajectoryRow
from areal_devkit.viewer import EpisodeView, render_page, write_page
from areal_devkit.viewer.browser import dump_dom, find_chromium
from areal_runtime.models.tokenizers import qwen3_tokenizer

EPISODES, TOKENS, PROMPT = 1000, 512, 200


def episodes(vocab: int, seed: int = 0) -> list[EpisodeView]:
    rng = random.Random(seed)
    out = []
    for i in range(EPISODES):
        ids = [rng.randrange(vocab) for _ in range(TOKENS)]
        mask = [0] * PROMPT + [1] * (TOKENS - PROMPT)
        logprobs = [0.0] * PROMPT + [-rng.random() * 3 for _ in range(TOKENS - PROMPT)]
        versions = [-1] * PROMPT + [i // 100] * (TOKENS - PROMPT)
        reward = float(rng.random() < 0.5)
        row = TrajectoryRow(ids, mask, logprobs, versions, reward)
        out.append(
            EpisodeView(i, i % 20 != 0, reward, None if i % 20 else "exception", None, [row])
        )
    return out


def main() -> int:
    chromium = find_chromium()
    if chromium is None:
        print("Chromium is missing: run scripts/install_chromium.sh", file=sys.stderr)
        return 2
    tokenizer = qwen3_tokenizer()  # a real 151k vocabulary: many distinct token texts
    data = episodes(len(tokenizer))
    start = time.perf_counter()
    render_page(data, tokenizer)
    render_s = time.perf_counter() - start
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "page.html"
        write_page(data, path, tokenizer)
        size_mb = path.stat().st_size / 1e6
        dcl, runs = [], []
        for _ in range(5):
            start = time.perf_counter()
            dom = dump_dom(chromium, path.as_uri())
            runs.append(time.perf_counter() - start)
            dcl.append(float(re.search(r'data-dcl="([0-9.]+)"', dom).group(1)) / 1000)
            assert 'data-ready="1"' in dom and "data-script-errors" not in dom
    print(
        table(
            ["page", "size MB", "render (Python) s", "DOMContentLoaded s", "chromium run s"],
            [
                [
                    f"{EPISODES} episodes x {TOKENS} tokens",
                    f"{size_mb:.1f}",
                    f"{render_s:.2f}",
                    f"{statistics.median(dcl):.2f}",
                    f"{statistics.median(runs):.2f}",
                ]
            ],
        )
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
