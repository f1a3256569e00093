# SPDX-License-Identifier: Apache-2.0
"""Train the embedded model from nothing to read a tool list: ``python -m areal_runtime.models.train_reader``.

Issue 39: fine-tuning the arithmetic model on tool episodes taught it the bundled agents' names,
not how to copy a name from the prompt (the copy drill rose linearly, ~0.04 per 100 steps, at
~1 step a second on one CPU thread). Copying is an attention pattern that needs many
examples, so this recipe trains one model on the whole mix at once, from a random start, with
large batches: bare questions, the bundled agents' requests, varied sum tools, fresh tool lists
(``schema_episodes``' ``alphabet`` vocabulary, every client shape), a copy drill, arithmetic
questions asked next to tools that do not fit (answered directly: an agent's turn must end),
and long prompts (padding tools, and position ids that jump ahead by up to 64k) so that the
turn ends behind a long prompt too.

Later stages continue the model on calculator agents spelled by others
(``calculator_episodes``), on agent-harness requests (``harness_episodes``), and on harness and
Claude Agent SDK requests whose environment turn follows the question (``--env-share``,
``--sdk-every``); ``RECIPE`` holds every stage.

Episodes are made by worker processes (``--workers``); the batches go to the GPU when there is
one (bf16 autocast) and to one CPU thread otherwise. The learning rate follows whichever of
``--steps`` and ``--seconds`` runs out first, and the run prints the steps it took.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import json
import math
import multiprocessing as mp
import os
import random
import time
from pathlib import Path
from typing import Any

from areal_runtime.models.calculator_episodes import calculator_episode
from areal_runtime.models.default_model import MAX_NEW_TOKENS, MAX_OPERAND, MAX_POSITIONS
from areal_runtime.models.harness_episodes import harness_episode, sdk_episode
from areal_runtime.models.schema_episodes import (
    ALPHABET,
    long_schema_episode,
    padding_tools,
    schema_episode,
)
from areal_runtime.models.tokenizers import tiny_tokenizer
from areal_runtime.models.tool_episodes import BUNDLED, ToolEpisode, bundled_episode, sample_episode

Row = tuple[list[int], list[int], list[int] | None]  # ids, labels (-100: no loss), positions
MIX = {  # share of a batch's rows
    "bare": 0.18,
    "bundled": 0.08,
    "varied": 0.14,
    "schema": 0.42,
    "drill": 0.08,
    "direct": 0.10,
}
# Calculator agents spelled fresh (``calculator_episodes``): 0 in the first two stages, so its
# share is a stage's setting (``calc_share``) rather than part of MIX. Long and agent-harness
# rows fill whole batches of their own (``long_every``, ``harness_every``): they are thousands
# of tokens, and a batch pads every row to its longest.
KIND_IDS = {k: i for i, k in enumerate([*MIX, "calc", "long", "harness", "sdk"])}
BUNDLED_WEIGHTS = (0.4, 0.35, 0.25)
SIZES = {  # hidden, intermediate, layers, heads, kv heads
    "tiny": (128, 384, 4, 4, 2),  # the shipped architecture (0.9M parameters)
    "small": (192, 576, 6, 6, 2),
    "base": (256, 768, 8, 8, 2),
}


RECIPE_KEY = "areal_devkit_recipe"
# How the shipped weights were made: these stages on one H200 GPU, each continuing the one
# before it (the first beside a second run, each run with its own episode workers; the later
# ones each beside two other settings, 5 workers each), then ``train_vision`` on one CPU
# thread. The GPU runs' learning rates followed their seconds (390, 170, 210, 200, 240 and
# 290); a rerun by the steps they reached follows the same schedule. The workers' timing orders
# the batches, so a rerun gives an equivalent model, not the same bytes. The last two stages
# continued the shipped weights after ``train_vision`` (which trains only the three image-token
# embeddings), and ``train_vision`` ran again after them (BENCHMARKS.md, "Reading the tool
# list": third round; "Calculators spelled by others, agent harnesses"; "The question behind
# the environment turn").
RECIPE = (
    {"size": "tiny", "steps": 3700, "rows": 128, "lr": 2e-3, "warmup": 0.03, "piece_share": 0.0},
    {"size": "tiny", "steps": 2021, "rows": 160, "lr": 1e-3, "warmup": 0.05, "piece_share": 0.35},
    {
        "size": "tiny", "steps": 1296, "rows": 160, "lr": 5e-4, "warmup": 0.05,
        "piece_share": 0.35, "calc_share": 0.3,
    },
    {
        "size": "tiny", "steps": 1196, "rows": 160, "lr": 5e-4, "warmup": 0.05,
        "piece_share": 0.35, "calc_share": 0.3, "harness_every": 4,
    },
    {
        "size": "tiny", "steps": 1167, "rows": 160, "lr": 3e-4, "warmup": 0.05, "seed": 5,
        "piece_share": 0.35, "calc_share": 0.3, "harness_every": 3, "sdk_every": 2,
        "env_share": 0.8,
    },
    {
        "size": "tiny", "steps": 1374, "rows": 160, "lr": 3e-4, "warmup": 0.05, "seed": 6,
        "piece_share": 0.35, "calc_share": 0.3, "harness_every": 3, "sdk_every": 2,
        "env_share": 0.8,
    },
)  # fmt: skip


def model_config(size: str) -> Any:
    """The shipped model's config with the widths and depths of ``SIZES[size]``."""
    from areal_runtime.models.default_model import model_config as shipped

    config = shipped()
    hidden, inter, layers, heads, kv = SIZES[size]
    config.hidden_size = hidden
    config.intermediate_size = inter
    config.num_hidden_layers = layers
    config.num_attention_heads = heads
    config.num_key_value_heads = kv
    config.layer_types = ["full_attention"] * layers
    return config


@functools.cache
def reader_names(piece_share: float = 0.35) -> Any:
    """``ALPHABET`` with ``piece_share`` of its made-up words built of the tokenizer's pieces."""
    vocab = tiny_tokenizer().get_vocab()
    pieces = sorted(
        t for t, i in vocab.items() if i < 512 and t.isascii() and t.isalpha() and t.islower()
    )
    return dataclasses.replace(ALPHABET, pieces=tuple(pieces), piece_share=piece_share)


def _render(tok: Any, messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> list[int]:
    return list(
        tok.apply_chat_template(
            messages, tools=tools, add_generation_prompt=True, tokenize=True, return_dict=False
        )
    )


def packed_row(tok: Any, episode: ToolEpisode) -> Row:
    """The episode's two turns in one sequence, rendered once (``train_tools.encode_packed``
    renders both prompts; this finds the first prompt's end in the second)."""
    p2 = _render(tok, episode.after_call(), episode.tools)
    call = tok.encode(episode.call_text(), add_special_tokens=False)
    assistant = tok.encode("<|im_start|>assistant\n", add_special_tokens=False)
    end = _last_index(p2, [*assistant, *call, tok.eos_token_id]) + len(assistant)
    answer = [*tok.encode(episode.answer, add_special_tokens=False), tok.eos_token_id]
    ids = p2 + answer
    labels = [-100] * len(ids)
    for i in [*range(end, end + len(call) + 1), *range(len(p2), len(ids))]:
        labels[i] = ids[i]
    return ids, labels, None


def _last_index(seq: list[int], sub: list[int]) -> int:
    for start in range(len(seq) - len(sub), -1, -1):
        if seq[start : start + len(sub)] == sub:
            return start
    raise ValueError("the chat template renders a tool call differently from call_text()")


def jumped(tok: Any, row: Row, rng: random.Random) -> Row:
    """``row`` with its positions from the user's turn on moved ahead by up to 64k: RoPE sees
    only distances, so a short row trains copying and ending a turn across a long prompt's."""
    ids, labels, _ = row
    start = tok.convert_tokens_to_ids("<|im_start|>")
    turns = [i for i, t in enumerate(ids) if t == start]
    user = turns[1] if len(turns) > 1 else 0
    jump = rng.randint(0, MAX_POSITIONS - len(ids))
    return ids, labels, [i + (jump if i >= user else 0) for i in range(len(ids))]


class RowMaker:
    """Draws training rows of every kind from one seeded ``random.Random``."""

    def __init__(
        self, seed: int, jump_share: float = 0.3, piece_share: float = 0.35,
        env_share: float = 0.0, harness_tool_share: float = 0.5,
    ) -> None:  # fmt: skip
        from areal_runtime.models.train_default import encode_example, split_pairs

        self.tok = tiny_tokenizer()
        self.rng = random.Random(seed)
        self.jump_share = jump_share
        self.env_share = env_share
        self.harness_tool_share = harness_tool_share
        self.names = reader_names(piece_share)
        self.bare_rows = [encode_example(self.tok, a, b) for a, b in split_pairs(0)[0]]

    def row(self, kind: str) -> Row:
        rng, tok = self.rng, self.tok
        if kind == "bare":
            prompt, answer = rng.choice(self.bare_rows)
            return prompt + answer, [-100] * len(prompt) + answer, None
        if kind == "bundled":
            shape = rng.choices(BUNDLED, weights=BUNDLED_WEIGHTS)[0]
            return packed_row(tok, bundled_episode(rng, shape))
        if kind == "varied":
            return packed_row(tok, sample_episode(rng, "train"))
        if kind == "schema":
            row = packed_row(tok, schema_episode(rng, None, names=self.names))
            return jumped(tok, row, rng) if rng.random() < self.jump_share else row
        if kind == "drill":
            return self.drill()
        if kind == "calc":
            return packed_row(tok, calculator_episode(rng))
        if kind == "sdk":
            return packed_row(tok, sdk_episode(rng, self.names))
        if kind == "direct":
            tools = schema_episode(rng, rng.randint(1, 4), names=self.names).tools
            row = self.direct(tools)
            return jumped(tok, row, rng) if rng.random() < self.jump_share else row
        if kind == "long":
            return self.long()
        if kind == "harness":
            return self.harness()
        raise ValueError(f"unknown row kind {kind!r}; use one of {list(KIND_IDS)}")

    def direct(self, tools: list[dict[str, Any]]) -> Row:
        """An arithmetic question next to tools that do not do sums: answered directly."""
        a, b = self.rng.randint(0, MAX_OPERAND), self.rng.randint(0, MAX_OPERAND)
        return self.answered([{"role": "user", "content": f"What is {a}+{b}?"}], tools, str(a + b))

    def answered(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]], text: str
    ) -> Row:
        prompt = _render(self.tok, messages, tools)
        answer = [*self.tok.encode(text, add_special_tokens=False), self.tok.eos_token_id]
        return prompt + answer, [-100] * len(prompt) + answer, None

    def harness(self) -> Row:
        """A question inside an agent harness's pages of prose (1k-12k tokens)."""
        tokens = self.rng.randint(1000, 12000)
        episode, direct = harness_episode(
            self.rng, tokens, self.env_share, self.names, self.harness_tool_share
        )
        row = packed_row(self.tok, episode) if episode else self.answered(*direct)
        return jumped(self.tok, row, self.rng) if self.rng.random() < 0.5 else row

    def drill(self) -> Row:
        """A run of fresh names and values, then the same run again (loss on the copy)."""
        from areal_runtime.models.train_tools import drill_row

        return (*drill_row(self.tok, self.rng, self.names), None)

    def long(self) -> Row:
        """A tool call, or a direct answer, behind 8-80 padding tools (about 1k-16k tokens)."""
        padding = self.rng.randint(8, 80)
        if self.rng.random() < 0.7:
            row = packed_row(self.tok, long_schema_episode(self.rng, padding))
        else:
            row = self.direct(padding_tools(self.rng, "chat", padding, held_out=False))
        return jumped(self.tok, row, self.rng) if self.rng.random() < self.jump_share else row


def padded(rows: list[Row], kinds: list[int], pad_id: int) -> dict[str, Any]:
    """Numpy arrays for a batch: ids, labels, positions, and each row's kind."""
    import numpy as np

    length = max(len(r[0]) for r in rows)
    ids = np.full((len(rows), length), pad_id, dtype=np.int64)
    labels = np.full((len(rows), length), -100, dtype=np.int64)
    positions = np.tile(np.arange(length, dtype=np.int64), (len(rows), 1))
    for i, (seq, lab, pos) in enumerate(rows):
        ids[i, : len(seq)] = seq
        labels[i, : len(lab)] = lab
        if pos is not None:
            positions[i, : len(pos)] = pos
            positions[i, len(pos) :] = pos[-1] + 1 + np.arange(length - len(pos))
    return {"ids": ids, "labels": labels, "positions": positions, "kinds": np.array(kinds)}


def batches(
    seed: int, rows: int, long_every: int, long_rows: int, piece_share: float, out: Any,
    calc_share: float = 0.0, harness_every: int = 0, sdk_every: int = 0,
    env_share: float = 0.0, harness_tool_share: float = 0.5,
) -> None:  # fmt: skip
    """Worker: put batches on ``out`` forever; every ``long_every``-th is ``long_rows`` long rows,
    else every ``harness_every``-th ``long_rows`` harness rows (``env_share`` of them with an
    environment block after the question), else every ``sdk_every``-th ``rows // 2`` Claude
    Agent SDK rows (~0.5-1.7k tokens), the others MIX's kinds scaled to ``1 - calc_share``
    beside ``calc_share`` calculator rows."""
    os.environ["TOKENIZERS_PARALLELISM"] = "false"
    maker = RowMaker(seed, piece_share=piece_share, env_share=env_share,
                     harness_tool_share=harness_tool_share)  # fmt: skip
    names = [*MIX, "calc"]
    weights = [w * (1 - calc_share) for w in MIX.values()] + [calc_share]
    n = 0
    while True:
        n += 1
        if long_every and n % long_every == 0:
            kinds = ["long"] * long_rows
        elif harness_every and n % harness_every == 0:
            kinds = ["harness"] * long_rows
        elif sdk_every and n % sdk_every == 0:
            kinds = ["sdk"] * (rows // 2)
        else:
            kinds = maker.rng.choices(names, weights=weights, k=rows)
        drawn = [maker.row(k) for k in kinds]
        out.put(padded(drawn, [KIND_IDS[k] for k in kinds], maker.tok.pad_token_id))


def lr_at(fraction: float, lr: float, warmup: float) -> float:
    """Linear warm-up over the first ``warmup`` of the run, then cosine down to a tenth."""
    if fraction < warmup:
        return lr * fraction / warmup
    progress = (fraction - warmup) / (1 - warmup)
    return lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * min(progress, 1.0))))


def train(
    out: Path, size: str = "tiny", steps: int = 20000, seconds: float = 1e9, rows: int = 96,
    lr: float = 2e-3, seed: int = 0, workers: int = 2, long_every: int = 8, long_rows: int = 16,
    warmup: float = 0.03, save_every_s: float = 90.0, init: Path | None = None,
    piece_share: float = 0.35, calc_share: float = 0.0, harness_every: int = 0,
    sdk_every: int = 0, env_share: float = 0.0, harness_tool_share: float = 0.5,
) -> dict[str, Any]:  # fmt: skip
    import torch
    from transformers import AutoModelForCausalLM

    cuda = torch.cuda.is_available()
    device = "cuda" if cuda else "cpu"
    if not cuda:
        torch.set_num_threads(1)
    torch.manual_seed(seed)
    if init is None:
        model = AutoModelForCausalLM.from_config(model_config(size), dtype=torch.float32)
    else:  # a continuation: --size is the folder's
        model = AutoModelForCausalLM.from_pretrained(str(init), dtype=torch.float32)
    model = model.to(device)
    print(f"{size}: {sum(p.numel() for p in model.parameters()):,} parameters on {device}")
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01, betas=(0.9, 0.98))
    ctx = mp.get_context("spawn")
    queue = ctx.Queue(maxsize=64)
    procs = [
        ctx.Process(
            target=batches,
            args=(
                seed * 1000 + w,
                rows,
                long_every,
                long_rows,
                piece_share,
                queue,
                calc_share,
                harness_every,
                sdk_every,
                env_share,
                harness_tool_share,
            ),
            daemon=True,
        )
        for w in range(workers)
    ]
    for p in procs:
        p.start()
    model.train()
    start = last_save = time.time()
    waited, step, kind_loss = 0.0, 0, torch.zeros(len(KIND_IDS), 2, device=device)
    while step < steps and time.time() - start < seconds:
        t0 = time.time()
        batch = _next_batch(queue, procs)
        waited += time.time() - t0
        step += 1
        t = {k: torch.from_numpy(v).to(device, non_blocking=True) for k, v in batch.items()}
        with torch.autocast(device, dtype=torch.bfloat16, enabled=cuda):
            logits = model(input_ids=t["ids"], position_ids=t["positions"]).logits[:, :-1]
        target = t["labels"][:, 1:]
        loss_tok = torch.nn.functional.cross_entropy(
            logits.float().reshape(-1, logits.shape[-1]), target.reshape(-1),
            ignore_index=-100, reduction="none",
        ).view_as(target)  # fmt: skip
        mask = (target != -100).float()
        loss = (loss_tok * mask).sum() / mask.sum()
        fraction = max(step / steps, (time.time() - start) / seconds)
        for group in opt.param_groups:
            group["lr"] = lr_at(fraction, lr, warmup)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        with torch.no_grad():
            per_row = (loss_tok * mask).sum(1)
            kind_loss[:, 0].index_add_(0, t["kinds"], per_row)
            kind_loss[:, 1].index_add_(0, t["kinds"], mask.sum(1))
        if step % 250 == 0:
            by_kind = {
                k: round(float(kind_loss[i, 0] / kind_loss[i, 1].clamp(min=1)), 4)
                for k, i in KIND_IDS.items()
            }
            kind_loss.zero_()
            elapsed = time.time() - start
            print(
                json.dumps({"size": size, "step": step, "s": round(elapsed), "loss": by_kind,
                            "data_wait": round(waited / elapsed, 2)}),
                flush=True,
            )  # fmt: skip
        if time.time() - last_save > save_every_s:
            save(model, out)
            last_save = time.time()
    for p in procs:
        p.terminate()
    elapsed = time.time() - start
    save(model, out)
    summary = {"size": size, "steps": step, "seconds": round(elapsed), "rows": rows, "lr": lr}
    print(json.dumps(summary), flush=True)
    return summary


def _next_batch(queue: Any, procs: list[Any]) -> dict[str, Any]:
    """The next batch, or an error naming the fix if every worker has died (a script that
    calls ``train`` without an ``if __name__ == "__main__":`` guard kills its spawned workers)."""
    import queue as queues

    while True:
        try:
            return queue.get(timeout=5)
        except queues.Empty:
            if not any(p.is_alive() for p in procs):
                codes = sorted({p.exitcode for p in procs})
                raise RuntimeError(
                    f"every episode worker exited (codes {codes}) and no batch is left: run the "
                    'trainer from a module or a script with an `if __name__ == "__main__":` '
                    "guard (workers are spawned and import the main module)"
                ) from None


def build_recipe(out: Path, workers: int) -> None:
    """Every stage of ``RECIPE`` from a random start into ``out``, each continuing the one
    before it (stage k in ``out/stage-k``, the last in ``out``), the recipe recorded in the
    saved config."""
    init = None
    for number, stage in enumerate(RECIPE, 1):
        folder = out if number == len(RECIPE) else out / f"stage-{number}"
        train(folder, workers=workers, init=init, **stage)
        init = folder
    config = json.loads((out / "config.json").read_text())
    config[RECIPE_KEY] = list(RECIPE)
    (out / "config.json").write_text(json.dumps(config, indent=2, sort_keys=True) + "\n")
    print(f"saved {out}; then: python -m areal_runtime.models.train_vision (into the package)")


def save(model: Any, out: Path) -> None:
    """Save a float32 copy on the CPU, marked as holding the arithmetic and tool skills."""
    import copy

    from areal_runtime.models.train_tools import SKILLS_KEY

    cpu = copy.deepcopy(model).float().cpu().eval()
    setattr(cpu.config, SKILLS_KEY, ["arithmetic", "tools"])
    cpu.generation_config.max_new_tokens = MAX_NEW_TOKENS
    out.mkdir(parents=True, exist_ok=True)
    cpu.save_pretrained(str(out))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, required=True, help="where to save the model")
    parser.add_argument("--size", choices=list(SIZES), default="tiny")
    parser.add_argument("--steps", type=int, default=20000)
    parser.add_argument("--seconds", type=float, default=1e9, help="stop (and end the lr) here")
    parser.add_argument("--rows", type=int, default=96, help="rows per batch")
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=2, help="episode-making processes")
    parser.add_argument("--long-every", type=int, default=8, help="every Nth batch is long rows")
    parser.add_argument("--long-rows", type=int, default=16)
    parser.add_argument("--warmup", type=float, default=0.03, help="share of the run")
    parser.add_argument("--init", type=Path, help="continue from this saved model")
    parser.add_argument(
        "--piece-share", type=float, default=0.35, help="made-up name words built of pieces"
    )
    parser.add_argument(
        "--calc-share", type=float, default=0.0, help="share of calculator-agent rows"
    )
    parser.add_argument(
        "--harness-every", type=int, default=0, help="every Nth batch is agent-harness rows"
    )
    parser.add_argument(
        "--sdk-every", type=int, default=0, help="every Nth batch is Claude Agent SDK rows"
    )
    parser.add_argument(
        "--env-share", type=float, default=0.0,
        help="harness rows with an environment block after the question",
    )  # fmt: skip
    parser.add_argument(
        "--harness-tool-share", type=float, default=0.5, help="harness rows offering a sum tool"
    )
    parser.add_argument(
        "--recipe", action="store_true", help="build the shipped weights (RECIPE) into --out"
    )
    args = parser.parse_args()
    if args.recipe:
        build_recipe(args.out, args.workers)
        return
    train(
        args.out, args.size, args.steps, args.seconds, args.rows, args.lr, args.seed,
        args.workers, args.long_every, args.long_rows, args.warmup, init=args.init,
        piece_share=args.piece_share, calc_share=args.calc_share,
        harness_every=args.harness_every, sdk_every=args.sdk_every, env_share=args.env_share,
        harness_tool_share=args.harness_tool_share,
    )  # fmt: skip


if __name__ == "__main__":
    main()
