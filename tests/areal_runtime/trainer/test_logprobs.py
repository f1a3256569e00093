# SPDX-License-Identifier: Apache-2.0
"""The actor's forward computes only what the loss reads, and gives the same numbers."""

import pytest
import torch

from areal_runtime.trainer.logprobs import prefix_hosts, token_logprobs, trained_logprobs


def right_padded(rows: list[list[int]], width: int) -> tuple[torch.Tensor, torch.Tensor]:
    ids = torch.zeros(len(rows), width, dtype=torch.long)
    attn = torch.zeros(len(rows), width, dtype=torch.bool)
    for i, row in enumerate(rows):
        ids[i, : len(row)] = torch.tensor(row)
        attn[i, : len(row)] = True
    return ids, attn


def test_prefix_hosts_pick_the_longest_row_holding_each_row():
    turn1, turn2 = [5, 6, 7], [5, 6, 7, 8, 9]
    ids, attn = right_padded([turn1, turn2, [5, 6, 7, 8], [4, 4], turn2, [5, 6]], 6)
    # [5, 6] sits in turn1, in [5, 6, 7, 8] and in turn2: the longest (lowest index) hosts it;
    # row 4 repeats row 1's tokens, so row 1 hosts it too.
    assert prefix_hosts(ids, attn) == [1, 1, 1, 3, 1, 1]


def test_left_padded_rows_are_not_shared():
    ids, attn = right_padded([[5, 6, 7], [5, 6]], 3)
    attn = attn.flip(1)
    assert prefix_hosts(ids, attn) is None


@pytest.fixture(scope="module")
def model():
    from areal_runtime.models.default_model import load_underconfident_model

    torch.set_num_threads(1)
    return load_underconfident_model()[0]


@pytest.mark.parametrize("shared_start", [0, 40])
def test_shared_rows_give_the_full_forwards_logprobs_and_gradient(model, shared_start):
    """Rows inside other rows, a duplicate, and (with ``shared_start``) a start every row shares,
    as a tool agent's system prompt: the logprobs and the gradient of a forward of every row."""
    gen = torch.Generator().manual_seed(0)
    start = torch.randint(3, 400, (shared_start,), generator=gen).tolist()
    long_rows = [start + torch.randint(3, 400, (40,), generator=gen).tolist() for _ in range(3)]
    n = shared_start + 30
    rows = [long_rows[0], long_rows[0][:n], long_rows[1], long_rows[1], long_rows[2][: n - 5]]
    ids, attn = right_padded(rows, shared_start + 40)
    where = torch.zeros_like(attn)
    for i, row in enumerate(rows):
        where[i, len(row) - 6 : len(row)] = True  # each row trains its own last tokens
    assert len(set(prefix_hosts(ids, attn))) == 3  # five rows, three forwards

    def run(fn):
        model.zero_grad()
        logp, entropy = fn()
        (logp * where).sum().backward()
        return logp.detach(), entropy, [p.grad.clone() for p in model.parameters()]

    full = run(lambda: token_logprobs(model, ids, attn, 0.8))
    shared = run(lambda: trained_logprobs(model, ids, attn, 0.8, where))
    torch.testing.assert_close(shared[0][where], full[0][where], atol=1e-5, rtol=1e-5)
    torch.testing.assert_close(shared[1][where], full[1][where], atol=1e-5, rtol=1e-5)
    assert not shared[0][~where].any() and not shared[1][~where].any()
    for got, want in zip(shared[2], full[2], strict=True):
        assert float((got - want).norm()) <= 1e-5 * float(want.norm()) + 1e-7


def test_a_shared_start_runs_once(model):
    """Counted at the decoder: one pass of the shared start, then each row's own tokens."""
    gen = torch.Generator().manual_seed(1)
    start = torch.randint(3, 400, (50,), generator=gen).tolist()
    rows = [start + torch.randint(3, 400, (10,), generator=gen).tolist() for _ in range(4)]
    ids, attn = right_padded(rows, 60)
    widths = []
    hook = model.get_decoder().register_forward_pre_hook(
        lambda module, args, kwargs: widths.append(tuple(kwargs["input_ids"].shape)),
        with_kwargs=True,
    )
    try:
        trained_logprobs(model, ids, attn, 1.0, attn)
    finally:
        hook.remove()
    assert widths == [(1, 50), (4, 10)]
