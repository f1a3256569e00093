# SPDX-License-Identifier: Apache-2.0
"""A KV cache layer that appends in place instead of concatenating.

transformers' ``DynamicLayer`` grows by ``torch.cat`` on every forward: a decode step at 26k
positions copied the whole 53 MB cache into a fresh allocation, three quarters of the step's
time (BENCHMARKS.md, "Long-context decode"). ``GrowingLayer`` keeps each layer's keys and values
in a buffer with spare room at the end and hands the model a view of the filled part, so a
step writes one column. The buffer grows geometrically (amortised O(1) a token); code that
swaps ``keys``/``values`` for other tensors (row selection, cropping, merges) is honoured: the
next update copies them into a fresh buffer.
"""

from __future__ import annotations

from typing import Any

import torch
from transformers.cache_utils import DynamicLayer

# Spare columns reserved when a buffer is (re)built: a quarter of the length, at least this many.
MIN_SPARE = 256


class GrowingLayer(DynamicLayer):
    """A full-attention ``DynamicLayer`` whose ``keys``/``values`` are views of a larger buffer."""

    _kbuf: torch.Tensor | None = None
    _vbuf: torch.Tensor | None = None

    def update(
        self, key_states: torch.Tensor, value_states: torch.Tensor, *args: Any, **kwargs: Any
    ) -> tuple[torch.Tensor, torch.Tensor]:
        if not self.is_initialized or self.keys is None or self.keys.numel() == 0:
            return super().update(key_states, value_states, *args, **kwargs)
        length = self.keys.shape[-2]
        end = length + key_states.shape[-2]
        if not self._backed(end):
            self._reserve(end)
        assert self._kbuf is not None and self._vbuf is not None
        self._kbuf[:, :, length:end] = key_states
        self._vbuf[:, :, length:end] = value_states
        self.keys = self._kbuf[:, :, :end]
        self.values = self._vbuf[:, :, :end]
        return self.keys, self.values

    def _backed(self, end: int) -> bool:
        """Whether ``keys``/``values`` are still the first columns of the buffers, with room up
        to ``end``."""
        k, v, kb, vb = self.keys, self.values, self._kbuf, self._vbuf
        return (
            kb is not None
            and vb is not None
            and k is not None
            and v is not None
            and kb.shape[2] >= end
            and k.data_ptr() == kb.data_ptr()
            and v.data_ptr() == vb.data_ptr()
            and k.shape[:2] == kb.shape[:2]
            and v.shape[:2] == vb.shape[:2]
            and k.shape[3] == kb.shape[3]
            and v.shape[3] == vb.shape[3]
            and k.stride() == kb.stride()
            and v.stride() == vb.stride()
        )

    def _reserve(self, end: int) -> None:
        assert self.keys is not None and self.values is not None
        capacity = end + max(MIN_SPARE, end // 4)
        self._kbuf = _buffer(self.keys, capacity)
        self._vbuf = _buffer(self.values, capacity)
        self.keys = self._kbuf[:, :, : self.keys.shape[2]]
        self.values = self._vbuf[:, :, : self.values.shape[2]]


def _buffer(t: torch.Tensor, capacity: int) -> torch.Tensor:
    """``t`` ([B, H, n, D]) copied into the first columns of a ``capacity``-column buffer."""
    batch, heads, length, dim = t.shape
    buf = t.new_empty(batch, heads, capacity, dim)
    buf[:, :, :length] = t
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
