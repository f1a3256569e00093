# SPDX-License-Identifier: Apache-2.0
"""The trajectory viewer: one self-contained HTML page (no CDN, works offline).

Per episode it shows the tokens as text coloured by the loss mask (trained vs context), turn
boundaries, the reward, and on hover each token's id, logprob and version; a reward and a
length histogram; filters for accepted / rejected and by reward. ``areal-devkit view`` builds it
from the files ``run --output`` and ``train`` write; ``run --html`` builds it directly.
"""

from areal_devkit.viewer.episodes import EpisodeView, episodes_from_file, episodes_from_records
from areal_devkit.viewer.page import render_page, write_page

__all__ = [
    "EpisodeView",
    "episodes_from_file",
    "episodes_from_records",
    "render_page",
    "write_page",
]
