# SPDX-License-Identifier: Apache-2.0
"""train_tools' copy curriculum (issue 39): short rows, loss on the call, jumps, the drill."""

import itertools
import random

from areal_runtime.models.default_model import MAX_POSITIONS
from areal_runtime.models.tokenizers import tiny_tokenizer
from areal_runtime.models.train_tools import _lr_scale, copy_batch, param_groups, repeat_batch


def test_a_copy_row_trains_only_the_call_and_has_no_system_prompt():
    tok = tiny_tokenizer()
    ids, labels, positions = copy_batch(tok, random.Random(4), 6, 2, "alphabet")
    for row in range(6):
        trained = tok.decode([t for t in labels[row].tolist() if t != -100])
        assert trained.startswith("<tool_call>{") and trained.endswith("</tool_call><|im_end|>")
        text = tok.decode(ids[row].tolist())
        assert "helpful assistant" not in text and "when needed" not in text
        assert text.count("<|im_start|>") == 3  # the tools' system turn, the user, the assistant
        assert positions[row].tolist() == list(range(ids.shape[1]))  # no jump asked for


def test_jumped_rows_skip_ahead_at_the_users_turn_and_stay_in_the_position_range():
    tok = tiny_tokenizer()
    start = tok.convert_tokens_to_ids("<|im_start|>")
    ids, _, positions = copy_batch(tok, random.Random(5), 8, 1, "alphabet", jump_share=1.0)
    jumps = []
    for row in range(8):
        length = int((ids[row] != tok.pad_token_id).sum())
        pos = positions[row, :length].tolist()
        steps = [b - a for a, b in itertools.pairwise(pos)]
        (at,) = [i + 1 for i, s in enumerate(steps) if s != 1] or [None]
        if at is None:  # a jump of 0 can be drawn
            continue
        assert [i for i, t in enumerate(ids[row].tolist()) if t == start][1] == at
        assert pos[-1] < MAX_POSITIONS
        jumps.append(pos[at] - at)
    assert len(jumps) >= 7 and max(jumps) > 10_000


def test_the_learning_rate_warms_up_then_decays():
    scales = [_lr_scale(step, 100, warmup=10, cooldown=20) for step in (1, 5, 10, 50, 80, 90, 100)]
    assert scales == [0.1, 0.5, 1.0, 1.0, 1.0, 0.5, 0.0]
    assert _lr_scale(1, 100, warmup=0, cooldown=0) == 1.0


def test_the_copy_drill_trains_the_second_copy_of_its_run_only():
    tok = tiny_tokenizer()
    ids, labels = repeat_batch(tok, random.Random(6), 5, "alphabet")
    start = tok.convert_tokens_to_ids("<|im_start|>")
    for row in range(5):
        seq = [t for t in ids[row].tolist() if t != tok.pad_token_id]
        second = seq.index(start, 1)
        run = seq[1 : second - 1]
        assert seq == [start, *run, tok.eos_token_id, start, *run, tok.eos_token_id]
        assert [t for t in labels[row].tolist() if t != -100] == [*run, tok.eos_token_id]


def test_the_query_key_norm_gains_get_their_own_learning_rate_only_when_asked():
    from transformers import AutoModelForCausalLM

    from areal_runtime.models.default_model import model_config

    model = AutoModelForCausalLM.from_config(model_config())
    (only,) = param_groups(model, 1.0)
    assert len(only["params"]) == len(list(model.parameters()))
    rest, norms = param_groups(model, 10.0)
    assert len(norms["params"]) == 2 * model.config.num_hidden_layers
    assert norms["lr_scale"] == 10.0 and norms["weight_decay"] == 0.0
    assert len(rest["params"]) + len(norms["params"]) == len(list(model.parameters()))
