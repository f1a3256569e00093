# SPDX-License-Identifier: Apache-2.0
"""Which dataset row the next episode gets, and how to carry that across a recovery.

Rows are drawn epoch by epoch in a (seeded) shuffled order, as AReaL's dataloader does. Rows
drawn but not yet trained when a recover checkpoint is dumped (episodes in flight, groups
waiting for a batch) are drawn again first after a resume, so the resumed run trains on the
rows the uninterrupted one would have.
"""

from __future__ import annotations

import random
from typing import Any


class DataCursor:
    """Draws row numbers of a dataset of ``size`` rows; see the module docstring."""

    def __init__(self, size: int, *, shuffle: bool, seed: int) -> None:
        self.size = size
        self.shuffle = shuffle
        self._rng = random.Random(seed)
        self._order: list[int] = []
        self._replay: list[int] = []  # rows to draw first (after a recovery)
        self._unfinished: dict[int, int] = {}  # episode index -> row, drawn but not trained

    def draw(self, episode: int) -> int:
        """The row for ``episode`` (episode indices increase with every draw)."""
        if self._replay:
            row = self._replay.pop(0)
        else:
            if not self._order:
                self._order = list(range(self.size))
                if self.shuffle:
                    self._rng.shuffle(self._order)
            row = self._order.pop(0)
        self._unfinished[episode] = row
        return row

    def row_of(self, episode: int) -> int:
        return self._unfinished[episode]

    def done(self, episode: int) -> None:
        """The episode was trained on, rejected or dropped: it is not drawn again."""
        self._unfinished.pop(episode, None)

    def state_dict(self) -> dict[str, Any]:
        version, internal, gauss = self._rng.getstate()
        return {
            "replay": [row for _, row in sorted(self._unfinished.items())] + self._replay,
            "order": list(self._order),
            "rng": [version, list(internal), gauss],
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self._replay = [int(r) for r in state["replay"]]
        self._order = [int(r) for r in state["order"]]
        bad = [r for r in self._replay + self._order if not 0 <= r < self.size]
        if bad:
            raise ValueError(
                f"the recover checkpoint names dataset rows {bad[:3]} but the dataset has "
                f"{self.size} rows: the dataset changed; use a new trial_name or "
                "recover.mode=disabled"
            )
        version, internal, gauss = state["rng"]
        self._rng.setstate((version, tuple(internal), gauss))
        self._unfinished.clear()
