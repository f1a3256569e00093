# SPDX-License-Identifier: Apache-2.0
"""The lean decode forward: transformers' numbers without transformers' module calls."""

import copy

import torch
from transformers import DynamicCache

from areal_runtime.engine.local.batching import BatchRunner
from areal_runtime.engine.local.decode_attention import use_decode_sdpa
from areal_runtime.engine.local.lean_decode import LeanDecoder
from areal_runtime.models.hf_forward import cache_keyword

from .conftest import tiny_qwen3


def prefilled(model, prompts: list[list[int]]) -> tuple[DynamicCache, torch.Tensor]:
    """A left-padded batch's cache and mask after transformers' own prefill."""
    width = max(map(len, prompts))
    ids = torch.zeros(len(prompts), width, dtype=torch.long)
    mask = torch.zeros(len(prompts), width, dtype=torch.long)
    for i, prompt in enumerate(prompts):
        ids[i, width - len(prompt) :] = torch.tensor(prompt)
        mask[i, width - len(prompt) :] = 1
    cache = DynamicCache()
    with torch.inference_mode():
        model(
            input_ids=ids,
            attention_mask=mask,
            position_ids=(mask.cumsum(-1) - 1).clamp(min=0),
            **{cache_keyword(model): cache},
        )
    return cache, mask


def test_a_step_matches_transformers_forward_with_and_without_padding():
    model = tiny_qwen3(512, seed=3)
    use_decode_sdpa(model)
    lean = LeanDecoder.for_model(model)
    assert lean is not None
    for prompts in ([[5, 6, 7, 8]], [[5, 6, 7, 8, 9, 10], [11, 12], [13, 14, 15]]):
        cache, mask = prefilled(model, prompts)
        ours_cache = copy.deepcopy(cache)
        for step in range(3):
            last = torch.tensor([[20 + step + i] for i in range(len(prompts))])
            positions = mask.sum(-1, keepdim=True)
            mask = torch.cat([mask, mask.new_ones(len(prompts), 1)], dim=1)
            with torch.inference_mode():
                theirs = model(
                    input_ids=last,
                    attention_mask=mask,
                    position_ids=positions,
                    **{cache_keyword(model): cache},
                    logits_to_keep=1,
                ).logits[:, -1, :]
            ours = lean(last, mask, positions, ours_cache)
            assert ours.shape == theirs.shape
            assert torch.allclose(ours, theirs.float(), atol=1e-5), (ours - theirs).abs().max()
        for mine, theirs in zip(ours_cache.layers, cache.layers, strict=True):
            assert torch.allclose(mine.keys, theirs.keys, atol=1e-6)
            assert torch.allclose(mine.values, theirs.values, atol=1e-6)


def test_weight_updates_are_seen_and_other_models_keep_transformers():
    model = tiny_qwen3(512, seed=4)
    runner = BatchRunner(model, pad_id=0, decode=lambda _: "", raw_logprobs=False, seed=0)
    assert runner.lean is not None  # the engine's decode steps go through it
    cache, mask = prefilled(model, [[5, 6, 7]])
    last, positions = torch.tensor([[9]]), torch.tensor([[3]])
    mask = torch.cat([mask, mask.new_ones(1, 1)], dim=1)
    before = runner.lean(last, mask, positions, copy.deepcopy(cache))
    with torch.no_grad():
        model.model.layers[0].mlp.down_proj.weight.mul_(2.0)  # as load_state_dict does, in place
    after = runner.lean(last, mask, positions, copy.deepcopy(cache))
    assert not torch.allclose(before, after)

    windowed = copy.deepcopy(model)
    windowed.config.layer_types = ["sliding_attention"] * windowed.config.num_hidden_layers
    assert LeanDecoder.for_model(windowed) is None
    eager = copy.deepcopy(model)
    eager.set_attn_implementation("eager")
    runner = BatchRunner(eager, pad_id=0, decode=lambda _: "", raw_logprobs=False, seed=0)
    assert runner.lean is None  # not switched to the decode attention: transformers' forward
