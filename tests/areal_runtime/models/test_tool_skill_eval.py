# SPDX-License-Identifier: Apache-2.0
"""The turn-ending measure decodes with the prompt in its KV cache, whatever transformers calls it."""

import torch

from areal_runtime.models.default_model import load_default_model
from areal_runtime.models.hf_forward import cache_keyword
from areal_runtime.models.tool_skill_eval import eos_steps


class PastKeyValuesForward(torch.nn.Module):
    """The same model behind a forward that names its cache ``past_key_values``, as
    transformers before 5.2x did; an unknown ``cache=`` lands in ``**kwargs`` unused."""

    def __init__(self, inner: torch.nn.Module) -> None:
        super().__init__()
        self.inner = inner

    def forward(self, input_ids, past_key_values=None, use_cache=None, **kwargs):
        keyword = cache_keyword(self.inner)
        return self.inner(input_ids=input_ids, use_cache=use_cache, **{keyword: past_key_values})


def test_every_sample_ends_its_short_answer_with_either_cache_keyword():
    torch.set_num_threads(1)
    model, tok = load_default_model()
    prompt = tok.apply_chat_template(
        [{"role": "user", "content": "What is 2+3?"}], add_generation_prompt=True, tokenize=True,
        return_dict=False,
    )  # fmt: skip
    for candidate in (model, PastKeyValuesForward(model)):
        steps = eos_steps(candidate, tok, list(prompt), 4, torch.Generator().manual_seed(0))
        # "5" and the EOS: only a decode that still sees the question ends this soon.
        assert steps == [2, 2, 2, 2], (type(candidate).__name__, steps)


def test_a_length_whose_prompt_passes_the_models_positions_is_refused_naming_the_longest():
    import pytest

    from areal_runtime.models.tool_skill_eval import eos_rate

    model, tok = load_default_model()
    model.config.max_position_embeddings = 2048  # a 2k-token prompt leaves no room to answer
    with pytest.raises(ValueError, match="at most 1024"):
        eos_rate(model, tok, 2048, prompts=1, samples=1, seed=0)
