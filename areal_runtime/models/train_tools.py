# SPDX-License-Identifier: Apache-2.0
"""Teach the embedded model to call tools: ``python -m areal_runtime.models.train_tools``.

Run after ``train_default`` (it fine-tunes the arithmetic model that script saves; about 10
minutes on one CPU thread). Each step trains 8 synthetic tool episodes from ``tool_episodes``,
packed one per sequence (the call, and the answer after the tool's result), next to 16 bare
questions so their accuracy holds. Most episodes are the bundled agents' exact requests; the
rest vary the client, the tool list and the names. The operands' digits weigh 5x in the loss
(copying them is the hard part), and the learning rate decays to 0 over the last 150 steps.

The skill is partial on purpose: the step count is where a tool agent sampled at temperature
1 gets its tool call right about a fifth of the time, which is the room RL has to improve it
(BENCHMARKS.md, "Tool agents on the embedded model"). More steps make it near perfect; fewer
leave it unable to call at all.
"""

from __future__ import annotations

import argparse
import inspect
import json
import random
import time
from pathlib import Path
from typing import Any

from areal_runtime.models.default_model import ARITHMETIC_MODEL_DIR
from areal_runtime.models.schema_episodes import (
    KINDS,
    VOCABULARIES,
    identifier,
    schema_episode,
    value,
)
from areal_runtime.models.tokenizers import tiny_tokenizer
from areal_runtime.models.tool_episodes import (
    BUNDLED,
    Split,
    ToolEpisode,
    bundled_episode,
    parsed_call,
    sample_episode,
)
from areal_runtime.models.train_default import (
    accuracy,
    encode_example,
    lm_batch,
    padded_batch,
    split_pairs,
)

SKILLS_KEY = "areal_devkit_skills"
BUNDLED_WEIGHTS = (0.4, 0.35, 0.25)  # the calculator's prompt is 3x longer: fewer of them


def encode_turns(tok: Any, episode: ToolEpisode) -> list[tuple[list[int], list[int]]]:
    """``(prompt, target)`` token pairs for the episode's two assistant turns."""

    def prompt(messages: list[dict[str, Any]]) -> list[int]:
        return list(
            tok.apply_chat_template(
                messages,
                tools=episode.tools,
                add_generation_prompt=True,
                tokenize=True,
                return_dict=False,
            )
        )

    def target(text: str) -> list[int]:
        return [*tok.encode(text, add_special_tokens=False), tok.eos_token_id]

    return [
        (prompt(episode.messages), target(episode.call_text())),
        (prompt(episode.after_call()), target(episode.answer)),
    ]


def encode_packed(tok: Any, episode: ToolEpisode) -> tuple[list[int], list[int]]:
    """The whole episode as one sequence, ``(ids, labels)``: loss on the call and the answer.

    The second turn's prompt already holds the call as the template renders it, so one forward
    pass trains both turns (half the prompt compute of two sequences); the system prompt, the
    question and the tool result are masked out (label -100).
    """
    (p1, t1), (p2, t2) = encode_turns(tok, episode)
    call = t1[:-1]  # without the EOS: the template closes the turn with it
    if p2[len(p1) : len(p1) + len(call)] != call or p2[len(p1) + len(call)] != tok.eos_token_id:
        raise ValueError("the chat template renders a tool call differently from call_text()")
    ids = p2 + t2
    labels = [-100] * len(ids)
    for i in [*range(len(p1), len(p1) + len(t1)), *range(len(p2), len(ids))]:
        labels[i] = ids[i]
    return ids, labels


def _generate(model: Any, tok: Any, prompt: list[int], greedy: bool, max_new: int) -> str:
    import torch

    with torch.no_grad():
        out = model.generate(
            torch.tensor([prompt]), max_new_tokens=max_new, do_sample=not greedy,
            temperature=None if greedy else 1.0, top_p=None, top_k=None,
            eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id,
        )  # fmt: skip
    return tok.decode(out[0, len(prompt) :], skip_special_tokens=False).replace(tok.eos_token, "")


def tool_skill(model: Any, tok: Any, episodes: list[ToolEpisode], greedy: bool) -> dict[str, float]:
    """How often the model calls right (name and operands), answers from the result, and both.

    ``call`` runs turn 1; ``answer`` runs turn 2 after the right call and result (as a client
    would send them); ``episode`` is both right in one sampled run, what a tool agent's reward
    measures on these questions.
    """
    call_ok = answer_ok = both = 0
    for episode in episodes:
        (p1, _), (p2, _) = encode_turns(tok, episode)
        call = parsed_call(_generate(model, tok, p1, greedy, 48))
        good_call = call is not None and call == episode.call
        answer = _generate(model, tok, p2, greedy, 6).strip()
        good_answer = answer == episode.answer
        call_ok += good_call
        answer_ok += good_answer
        both += good_call and good_answer
    n = max(len(episodes), 1)
    return {"call": call_ok / n, "answer": answer_ok / n, "episode": both / n}


def evaluation_episodes(split: Split, n: int, seed: int = 1234) -> list[ToolEpisode]:
    rng = random.Random(seed)
    return [sample_episode(rng, split) for _ in range(n)]


def load_base(path: Path, resume: bool = False) -> Any:
    """The arithmetic model ``train_default`` saved; a tool-trained one is refused."""
    from transformers import AutoModelForCausalLM

    model = AutoModelForCausalLM.from_pretrained(str(path), dtype="float32")
    if not resume and "tools" in (getattr(model.config, SKILLS_KEY, None) or []):
        raise SystemExit(
            f"{path} already holds the tool-trained model; run "
            "`python -m areal_runtime.models.train_default` first (it writes the arithmetic "
            "model this script starts from), or pass --base with an arithmetic checkpoint"
        )
    return model


def weighted_loss(
    model: Any, ids: Any, labels: Any, digits: Any, digit_weight: float, positions: Any = None
) -> Any:
    """Next-token cross-entropy with the digits' targets weighted ``digit_weight`` times.

    The call is ~45 tokens of which 3-4 are the operands: unweighted, the boilerplate the
    model learns in a few dozen steps drowns the copying it needs hundreds for.
    """
    import torch

    logits = model(input_ids=ids, position_ids=positions).logits[:, :-1]
    target = labels[:, 1:]
    loss = torch.nn.functional.cross_entropy(
        logits.reshape(-1, logits.shape[-1]),
        target.reshape(-1),
        ignore_index=-100,
        reduction="none",
    ).view_as(target)
    weight = (target != -100).float() * (1 + (digit_weight - 1) * digits[target.clamp(min=0)])
    return (loss * weight).sum() / (target != -100).sum()


def copy_batch(
    tok: Any, rng: random.Random, batch: int, max_tools: int, names: str, jump_share: float = 0.0
) -> tuple[Any, Any, Any]:
    """A copy-curriculum batch: short fresh tool lists (no system prompt), loss on the call only.

    Dense and short (~250 tokens a row with 1-2 tools) so a step spends its compute on the
    copying, not on long prompts or the answer turn. ``jump_share`` of the rows skip their
    positions ahead (``jumped_positions``). Returns ``(ids, labels, position_ids)``.
    """
    import torch

    n_tools = rng.randint(1, max_tools)
    vocab = VOCABULARIES[names][0]
    rows, positions = [], []
    for _ in range(batch):
        episode = schema_episode(rng, n_tools, names=vocab, system_prompts=[""])
        prompt, target = encode_turns(tok, episode)[0]
        rows.append((prompt + target, [-100] * len(prompt) + target))
        jump = jump_share > 0 and rng.random() < jump_share  # no draw at 0: same data
        positions.append(jumped_positions(tok, prompt, len(target), rng) if jump else None)
    ids, labels = padded_batch(rows, tok.pad_token_id)
    table = torch.arange(ids.shape[1]).repeat(len(rows), 1)
    for row, pos in enumerate(positions):
        if pos is not None:
            table[row, : len(pos)] = torch.tensor(pos)
    return ids, labels, table


def repeat_batch(tok: Any, rng: random.Random, batch: int, names: str) -> tuple[Any, Any]:
    """The copy drill: a run of fresh names and values, then the same run again (loss on it).

    Every target token is copyable from the first half and from nothing else, the densest
    signal there is for the attention pattern that copies (an induction head), which the
    tool-call rows alone train only a few tokens a row.
    """
    vocab = VOCABULARIES[names][0]
    rows = [drill_row(tok, rng, vocab) for _ in range(batch)]
    return padded_batch(rows, tok.pad_token_id)


def drill_row(tok: Any, rng: random.Random, vocab: Any) -> tuple[list[int], list[int]]:
    """One copy-drill row, ``(ids, labels)``: 3-8 fresh names and values, then the same again."""
    items = [
        identifier(rng, vocab, rng.randint(1, vocab.max_parts))
        if rng.random() < 0.6
        else json.dumps(value(rng, rng.choice(KINDS), vocab))
        for _ in range(rng.randint(3, 8))
    ]
    run = tok.encode(" ".join(items), add_special_tokens=False)
    start, end = tok.convert_tokens_to_ids("<|im_start|>"), tok.eos_token_id
    return [start, *run, end, start, *run, end], [-100] * (len(run) + 3) + [*run, end]


def jumped_positions(tok: Any, prompt: list[int], target: int, rng: random.Random) -> list[int]:
    """Position ids that skip ahead by up to 64k between the tool list and the user's turn.

    RoPE sees only relative distances, so a short row with a jump teaches copying a name and
    ending the turn across the distances of a long agent prompt at a short row's cost.
    """
    from areal_runtime.models.default_model import MAX_POSITIONS

    start = tok.convert_tokens_to_ids("<|im_start|>")
    turn = [i for i, t in enumerate(prompt) if t == start][1]  # the user's turn
    length = len(prompt) + target
    jump = rng.randint(0, MAX_POSITIONS - length)
    return [i + (jump if i >= turn else 0) for i in range(length)]


def _lr_scale(step: int, total: int, warmup: int, cooldown: int) -> float:
    """Linear warm-up over the first ``warmup`` steps, linear decay over the last ``cooldown``."""
    scale = min(1.0, step / warmup) if warmup else 1.0
    return scale * (min(1.0, (total - step) / cooldown) if cooldown else 1.0)


def train(
    base: Path,
    out: Path,
    steps: int = 800,
    seed: int = 0,
    batch: int = 8,
    bare: int = 16,
    lr: float = 2e-3,
    bundled_share: float = 0.6,
    digit_weight: float = 5.0,
    cooldown: int = 150,
    final_lr: float = 0.0,
    save_every: int = 0,
    evaluate: bool = True,
    resume: bool = False,
    schema_share: float = 0.0,
    schema_max_tools: int = 6,
    schema_names: str = "letters",
    copy_steps: int = 0,
    copy_batch_size: int = 24,
    copy_max_tools: int = 2,
    warmup: int = 0,
    eval_every: int = 0,
    jump_share: float = 0.0,
    repeat_batch_size: int = 0,
    qk_norm_lr_scale: float = 1.0,
) -> None:
    """``copy_steps`` copy-curriculum steps (``copy_batch``), then ``steps`` AdamW steps, each on
    ``batch`` packed tool episodes and ``bare`` questions.

    The episodes of one step share a shape (a bundled agent's request, or varied ones), so the
    batch pads little; the bare questions go in a second forward pass whose loss is added.
    ``schema_share`` of the varied steps train ``schema_episodes``' copy task instead (whole
    tool lists drawn fresh, up to ``schema_max_tools`` tools); at 0 no draw is made for it, so
    the default recipe's episodes are unchanged. ``schema_names`` picks the names' vocabulary
    (``schema_episodes.VOCABULARIES``); ``eval_every`` prints ``tool_skill_eval``'s small
    checkpoint measure as a JSON line.
    """
    import torch

    torch.set_num_threads(1)
    torch.manual_seed(seed)
    tok = tiny_tokenizer()
    model = load_base(base, resume)
    train_pairs, held_out = split_pairs(0)  # train_default's split (its seed)
    bare_examples = [encode_example(tok, a, b) for a, b in train_pairs]
    rng = random.Random(seed)
    digits = torch.zeros(len(tok))
    for d in "0123456789":
        digits[tok.convert_tokens_to_ids(d)] = 1.0
    opt = torch.optim.AdamW(param_groups(model, qk_norm_lr_scale), lr=lr, weight_decay=0.01)
    model.train()
    start = time.time()
    total = copy_steps + steps
    for step in range(1, total + 1):
        if step <= copy_steps:
            ids, labels, pos = copy_batch(
                tok, rng, copy_batch_size, copy_max_tools, schema_names, jump_share
            )
            loss = weighted_loss(model, ids, labels, digits, digit_weight, pos)
            if repeat_batch_size:
                ids, labels = repeat_batch(tok, rng, repeat_batch_size, schema_names)
                loss = loss + model(input_ids=ids, labels=labels).loss
        else:
            if rng.random() < bundled_share:
                shape = rng.choices(BUNDLED, weights=BUNDLED_WEIGHTS)[0]
                episodes = [bundled_episode(rng, shape) for _ in range(batch)]
            elif schema_share and rng.random() < schema_share:
                n_tools = rng.randint(1, schema_max_tools)  # one count a step: little padding
                vocab = VOCABULARIES[schema_names][0]
                episodes = [schema_episode(rng, n_tools, names=vocab) for _ in range(batch)]
            else:
                episodes = [sample_episode(rng, "train") for _ in range(batch)]
            packed = [encode_packed(tok, e) for e in episodes]
            ids, labels = padded_batch(packed, tok.pad_token_id)
            loss = weighted_loss(model, ids, labels, digits, digit_weight)
        if bare:
            ids, labels = lm_batch(rng.sample(bare_examples, bare), tok.pad_token_id)
            loss = loss + model(input_ids=ids, labels=labels).loss
        scale = _lr_scale(step, total, warmup, cooldown)
        _step(model, opt, loss, final_lr + (lr - final_lr) * scale, final_lr)
        _log(model, tok, step, total, loss, start, out, save_every, eval_every, schema_names)
    model.eval()
    if evaluate:
        report(model, tok, held_out)
    _save(model, out)


def param_groups(model: Any, qk_norm_lr_scale: float) -> list[dict[str, Any]]:
    """One group, or the query/key norms' gains apart with ``qk_norm_lr_scale`` x the lr and no
    weight decay.

    Qwen3 normalises queries and keys, so with gains near 1 an attention logit stays under
    ~sqrt(head_dim) (5.7 here): too flat to pick one token out of a few hundred, which copying
    a name needs. The gains have to grow for that, and at the base lr they grow slowly.
    """
    if qk_norm_lr_scale == 1.0:
        return [{"params": list(model.parameters())}]
    norms = [
        p for n, p in model.named_parameters() if n.endswith(("q_norm.weight", "k_norm.weight"))
    ]
    rest = [
        p for n, p in model.named_parameters() if not n.endswith(("q_norm.weight", "k_norm.weight"))
    ]
    return [
        {"params": rest},
        {"params": norms, "lr_scale": qk_norm_lr_scale, "weight_decay": 0.0},
    ]


def _step(model: Any, opt: Any, loss: Any, step_lr: float, final_lr: float) -> None:
    import torch

    opt.zero_grad()
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    for group in opt.param_groups:
        group["lr"] = max(step_lr, final_lr) * group.get("lr_scale", 1.0)
    opt.step()


def _log(
    model: Any, tok: Any, step: int, total: int, loss: Any, start: float, out: Path,
    save_every: int, eval_every: int, names: str,
) -> None:  # fmt: skip
    """The loss every 25 steps; a checkpoint and the small measure when they fall due."""
    if step % 25 == 0:
        print(f"step {step} loss {loss.item():.4f} ({time.time() - start:.0f}s)", flush=True)
    if save_every and step % save_every == 0 and step < total:
        _save(model, out / f"step-{step}")
    if eval_every and step % eval_every == 0:
        from areal_runtime.models.tool_skill_eval import checkpoint_measure

        model.eval()
        figures = checkpoint_measure(model, tok, names)
        print(json.dumps({"step": step, "cpu_s": round(time.process_time(), 1), **figures}))
    model.train()


def _save(model: Any, out: Path) -> None:
    setattr(model.config, SKILLS_KEY, ["arithmetic", "tools"])
    out.mkdir(parents=True, exist_ok=True)
    model.eval().save_pretrained(str(out))
    print(f"saved {out}", flush=True)


def report(model: Any, tok: Any, held_out_pairs: list[tuple[int, int]], n: int = 40) -> None:
    """Bare accuracy (train_default's measure) and the tool skill: on each bundled agent's
    request (sampled at T=1, as RL starts from it) and on varied seen and unseen names."""
    import torch

    print(
        f"bare questions, greedy accuracy on held-out pairs: {accuracy(model, tok, held_out_pairs):.2f}"
    )
    for shape in BUNDLED:
        rng = random.Random(1234)
        episodes = [bundled_episode(rng, shape) for _ in range(n)]
        greedy = tool_skill(model, tok, episodes, greedy=True)
        torch.manual_seed(0)
        sampled = tool_skill(model, tok, episodes, greedy=False)
        print(f"{shape}: greedy {_fmt(greedy)}; sampled (T=1) {_fmt(sampled)}", flush=True)
    for split in ("train", "held_out"):
        greedy = tool_skill(model, tok, evaluation_episodes(split, n), greedy=True)
        print(f"varied tools, {split} names: greedy {_fmt(greedy)}", flush=True)


def _fmt(scores: dict[str, float]) -> str:
    return ", ".join(f"{k} {v:.2f}" for k, v in scores.items())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument(
        "--base", type=Path, default=ARITHMETIC_MODEL_DIR, help="the arithmetic model"
    )
    parser.add_argument("--out", type=Path, default=ARITHMETIC_MODEL_DIR, help="where to save")
    defaults = {k: v.default for k, v in inspect.signature(train).parameters.items()}
    parser.add_argument("--steps", type=int, default=defaults["steps"])
    parser.add_argument("--batch", type=int, default=defaults["batch"], help="tool episodes/step")
    parser.add_argument("--bare", type=int, default=defaults["bare"], help="bare questions/step")
    parser.add_argument("--lr", type=float, default=defaults["lr"])
    parser.add_argument("--bundled-share", type=float, default=defaults["bundled_share"])
    parser.add_argument("--digit-weight", type=float, default=defaults["digit_weight"])
    parser.add_argument("--cooldown", type=int, default=defaults["cooldown"], help="lr decay steps")
    parser.add_argument("--final-lr", type=float, default=defaults["final_lr"], help="decay end")
    parser.add_argument("--seed", type=int, default=defaults["seed"])
    parser.add_argument(
        "--schema-share", type=float, default=defaults["schema_share"],
        help="share of the varied steps on fresh tool lists (schema_episodes)",
    )  # fmt: skip
    parser.add_argument("--schema-max-tools", type=int, default=defaults["schema_max_tools"])
    parser.add_argument(
        "--schema-names", choices=("letters", "alphabet"), default=defaults["schema_names"],
        help="the fresh tool lists' name vocabulary (schema_episodes.VOCABULARIES)",
    )  # fmt: skip
    parser.add_argument(
        "--copy-steps", type=int, default=0, help="copy-curriculum steps before --steps"
    )
    parser.add_argument("--copy-batch-size", type=int, default=defaults["copy_batch_size"])
    parser.add_argument("--copy-max-tools", type=int, default=defaults["copy_max_tools"])
    parser.add_argument("--warmup", type=int, default=0, help="linear lr warm-up steps")
    parser.add_argument(
        "--qk-norm-lr-scale", type=float, default=1.0, help="lr multiple for q/k norm gains"
    )
    parser.add_argument(
        "--repeat-batch-size", type=int, default=0, help="copy-drill rows per copy step"
    )
    parser.add_argument(
        "--jump-share", type=float, default=0.0, help="copy rows whose positions skip ahead"
    )
    parser.add_argument("--eval-every", type=int, default=0, help="print the small measure")
    parser.add_argument("--save-every", type=int, default=0, help="also save out/step-N")
    parser.add_argument("--no-eval", action="store_true", help="skip the final report")
    parser.add_argument("--resume", action="store_true", help="continue from a tool-trained --base")
    args = parser.parse_args()
    settings = {k: getattr(args, k) for k in defaults if hasattr(args, k)}
    train(**settings, evaluate=not args.no_eval)


if __name__ == "__main__":
    main()
