# SPDX-License-Identifier: Apache-2.0
"""A KV cache layer that appends, joins and drops rows in place instead of copying the cache.

transformers' ``DynamicLayer`` grows by ``torch.cat`` on every forward: a decode step at 26k
positions copied the whole 53 MB cache into a fresh allocation, three quarters of the step's
time (BENCHMARKS.md, "Long-context decode"). ``GrowingLayer`` keeps each layer's keys and values
in a buffer with spare room and hands the model a view of the filled window (rows
``[0, n)``, columns ``[start, end)``), so a decode step writes one column.

Continuous batching also changes the rows: requests join (left-padded to the batch's length)
and finish at every step of an agent's episodes. Copying the whole cache for each was a third
of the engine thread's time when a tool agent trained (BENCHMARKS.md, "Rows in place").
Here a finished row's slot takes the last row (``keep_rows``), leading padding is dropped by
moving the window's start (``trim``), and new rows are written into spare rows
(``append_rows``), so each costs the rows it moves, not the cache. The buffer grows
geometrically in both directions (amortised O(1) a token and a row); code that swaps
``keys``/``values`` for other tensors (transformers' row selection, cropping) is honoured: the
next update copies them into a fresh buffer.
"""

from __future__ import annotations

from typing import Any

import torch
from transformers.cache_utils import DynamicLayer

# Spare columns reserved when a buffer is (re)built: a quarter of the length, at least this many.
MIN_SPARE = 256
# Spare rows reserved when rows join a batch whose buffer is full: a quarter, at least this many.
MIN_SPARE_ROWS = 4


class GrowingLayer(DynamicLayer):
    """A full-attention ``DynamicLayer`` whose ``keys``/``values`` are a window of a larger
    buffer: ``_kbuf[:rows, :, _start:_start + length]``."""

    _kbuf: torch.Tensor | None = None
    _vbuf: torch.Tensor | None = None
    _start: int = 0

    def update(
        self, key_states: torch.Tensor, value_states: torch.Tensor, *args: Any, **kwargs: Any
    ) -> tuple[torch.Tensor, torch.Tensor]:
        if not self.is_initialized or self.keys is None or self.keys.numel() == 0:
            return super().update(key_states, value_states, *args, **kwargs)
        rows, length = self.keys.shape[0], self.keys.shape[2]
        added = key_states.shape[-2]
        if not self.backed() or self._start + length + added > self._buffers()[0].shape[2]:
            self._reserve(length + added)
        kbuf, vbuf = self._buffers()
        begin = self._start + length
        kbuf[:rows, :, begin : begin + added] = key_states
        vbuf[:rows, :, begin : begin + added] = value_states
        self._window(rows, self._start, begin + added)
        return self.keys, self.values

    def backed(self) -> bool:
        """Whether ``keys``/``values`` are still this layer's window of its buffers."""
        if self._kbuf is None or self._vbuf is None or self.keys is None or self.values is None:
            return False
        for view, buf in ((self.keys, self._kbuf), (self.values, self._vbuf)):
            if (
                view.dim() != 4
                or view.stride() != buf.stride()
                or view.shape[0] > buf.shape[0]
                or view.shape[1] != buf.shape[1]
                or view.shape[3] != buf.shape[3]
                or self._start + view.shape[2] > buf.shape[2]
                or view.data_ptr()
                != buf.data_ptr() + self._start * buf.stride(2) * buf.element_size()
            ):
                return False
        return True

    @torch.inference_mode()  # its buffers are inference tensors (made in a forward)
    def keep_rows(self, order: list[int]) -> None:
        """Keep rows ``order`` (row ``j`` becomes old row ``order[j]``), moving only the rows
        whose index changes. Every ``j`` with ``order[j] != j`` must be a row not kept."""
        assert self.keys is not None
        if not self.backed():
            self._reserve(self.keys.shape[2])
        end = self._start + self.keys.shape[2]
        moved = [j for j, i in enumerate(order) if i != j]
        if moved:
            dst, src = torch.tensor(moved), torch.tensor([order[j] for j in moved])
            for buf in self._buffers():
                window = buf[:, :, self._start : end]
                window[dst] = window[src]
        self._window(len(order), self._start, end)

    @torch.inference_mode()
    def trim(self, columns: int) -> None:
        """Drop the window's first ``columns`` columns (padding in every row)."""
        assert self.keys is not None
        if not self.backed():
            self._reserve(self.keys.shape[2])
        self._window(self.keys.shape[0], self._start + columns, self._start + self.keys.shape[2])

    @torch.inference_mode()
    def append_rows(
        self, keys: torch.Tensor, values: torch.Tensor, max_rows: int | None = None
    ) -> None:
        """Add rows ``keys``/``values`` (``[m, H, t, D]``) after the batch's rows, both
        left-padded with zeros to the longer length (the batch's mask says which are padding;
        zeros, not stale memory, so a masked column never brings a NaN into attention). A new
        buffer's spare rows stop at ``max_rows`` (the engine's batch limit), if given."""
        assert self.keys is not None
        rows, length = self.keys.shape[0], self.keys.shape[2]
        added, width = keys.shape[0], keys.shape[2]
        grow = max(0, width - length)
        if not self.backed() or grow > self._start or rows + added > self._buffers()[0].shape[0]:
            self._reserve(length, rows=rows + added, left=grow, max_rows=max_rows)
        end = self._start + length
        start = self._start - grow
        for buf, new in zip(self._buffers(), (keys, values), strict=True):
            buf[:rows, :, start : self._start] = 0
            buf[rows : rows + added, :, start : end - width] = 0
            buf[rows : rows + added, :, end - width : end] = new
        self._window(rows + added, start, end)

    def _buffers(self) -> tuple[torch.Tensor, torch.Tensor]:
        assert self._kbuf is not None and self._vbuf is not None
        return self._kbuf, self._vbuf

    def _window(self, rows: int, start: int, end: int) -> None:
        kbuf, vbuf = self._buffers()
        self._start = start
        self.keys = kbuf[:rows, :, start:end]
        self.values = vbuf[:rows, :, start:end]

    def _reserve(
        self, end: int, rows: int | None = None, left: int = 0, max_rows: int | None = None
    ) -> None:
        """Copy the window into fresh buffers: ``left`` free columns before it, room for
        ``end`` columns after its start plus spare, and for ``rows`` rows plus spare (up to
        ``max_rows``) if given, else as many rows as the old buffer had (its spare rows kept)."""
        assert self.keys is not None and self.values is not None
        current, length = self.keys.shape[0], self.keys.shape[2]
        capacity = left + end + max(MIN_SPARE, end // 4)
        if rows is not None:
            height = rows + max(MIN_SPARE_ROWS, rows // 4)
            height = max(rows, min(height, max_rows or height))
        else:
            height = max(current, 0 if self._kbuf is None else self._kbuf.shape[0])
        self._kbuf = _buffer(self.keys, height, capacity, left)
        self._vbuf = _buffer(self.values, height, capacity, left)
        self._window(current, left, left + length)


def _buffer(t: torch.Tensor, rows: int, capacity: int, left: int) -> torch.Tensor:
    """``t`` ([B, H, n, D]) copied into rows ``[0, B)``, columns ``[left, left + n)`` of a
    ``rows`` x ``capacity`` buffer."""
    batch, heads, length, dim = t.shape
    buf = t.new_empty(rows, heads, capacity, dim)
    buf[:batch, :, left : left + length] = t
    return buf


def make_growing(cache: Any) -> Any:
    """Turn ``cache``'s plain full-attention layers into ``GrowingLayer`` in place (keeping
    their tensors; the first update moves them into a buffer); other layer kinds (sliding
    window, offloaded, quantised) are left as they are. Returns ``cache``."""
    layers = getattr(cache, "layers", None)
    if layers is None:
        return cache
    for i, layer in enumerate(layers):
        if type(layer) is DynamicLayer:
            grown = GrowingLayer()
            grown.__dict__.update(layer.__dict__)
            layers[i] = grown
    return cache


def growing_layers(cache: Any) -> list[GrowingLayer] | None:
    """``cache``'s layers as filled ``GrowingLayer``s (plain layers converted in place), or
    None if any layer is of another kind: the rows then change by transformers' own copies."""
    layers = getattr(make_growing(cache), "layers", None)
    if not layers or not all(
        isinstance(layer, GrowingLayer)
        and layer.is_initialized
        and layer.keys is not None
        and layer.keys.numel()
        for layer in layers
    ):
        return None
    return layers


def compaction_order(rows: int, keep: list[int]) -> list[int]:
    """Which old row each kept slot holds after a drop (``keep`` ascending): kept rows stay
    where they are, and each freed slot below ``len(keep)`` takes one of the last kept rows,
    so a drop moves as many rows as it frees, not every row after it."""
    assert all(0 <= i < rows for i in keep)
    kept = set(keep)
    order = list(range(len(keep)))
    holes = [j for j in order if j not in kept]
    tail = [i for i in keep if i >= len(keep)]
    for hole, row in zip(holes, tail, strict=True):
        order[hole] = row
    return order
