# SPDX-License-Identifier: Apache-2.0
"""Issue 39's held-out measure: ``python -m areal_runtime.models.tool_skill_eval``.

Two figures for a model on tools it has never seen:

- **call accuracy**: tool lists drawn at run time from ``schema_episodes`` with an evaluation
  vocabulary no training name can come from, in each client's request shape, rendered with the
  embedded chat template and answered greedily; scored for the right name, the right argument
  names and the right values, on one-tool and four-tool prompts separately. Two vocabularies:
  ``held_out_names`` (``ALPHABET_HELD_OUT``: every letter, syllables and English words that the
  ``alphabet`` training vocabulary never draws) and ``held_out`` (``LETTERS_HELD_OUT``: letters
  the pilot's ``letters`` training names never contain; stricter, kept for comparison);
- **EOS rate**: how often the model ends its turn within 64 new tokens at temperature 1 on
  prompts padded to 1k-16k tokens (more invented tools with long descriptions in the system
  prompt), since an agent whose model never stops waits for the token cap on every turn; and
  within 128, because half of the right replies (tool calls with made-up names, which the tiny
  tokenizer splits into many tokens) are longer than 64 tokens.
"""

from __future__ import annotations

import argparse
import json
import random
import time
from pathlib import Path
from typing import Any

from areal_runtime.models.default_model import MODEL_DIR
from areal_runtime.models.schema_episodes import (
    ALPHABET,
    ALPHABET_HELD_OUT,
    SHAPES,
    VOCABULARIES,
    Names,
    padding_tools,
    schema_episode,
)
from areal_runtime.models.tokenizers import tiny_tokenizer
from areal_runtime.models.tool_episodes import ToolEpisode, parsed_call

EOS_NEW_TOKENS = 64
LONG_EOS_NEW_TOKENS = 128
PREFILL_CHUNK = 1024  # bounds the attention scores' memory on long prompts


def held_out_episodes(
    n_tools: int, n: int, seed: int, held_out: bool = True, names: Names | None = None
) -> list[ToolEpisode]:
    """``n`` episodes with ``n_tools`` tools each, the request shapes in turn."""
    rng = random.Random(seed)
    return [
        schema_episode(rng, n_tools, SHAPES[i % len(SHAPES)], held_out=held_out, names=names)
        for i in range(n)
    ]


def prompt_ids(tok: Any, episode: ToolEpisode) -> list[int]:
    return list(
        tok.apply_chat_template(
            episode.messages,
            tools=episode.tools,
            add_generation_prompt=True,
            tokenize=True,
            return_dict=False,
        )
    )


def greedy_text(model: Any, tok: Any, prompt: list[int], max_new: int) -> str:
    """The greedy continuation of ``prompt`` up to its EOS or ``max_new`` tokens."""
    import torch

    with torch.no_grad():
        out = model.generate(
            torch.tensor([prompt]), max_new_tokens=max_new, do_sample=False,
            eos_token_id=tok.eos_token_id, pad_token_id=tok.pad_token_id,
        )  # fmt: skip
    return tok.decode(out[0, len(prompt) :], skip_special_tokens=False).replace(tok.eos_token, "")


def score_call(call: dict[str, Any] | None, expected: dict[str, Any]) -> dict[str, bool]:
    """Name, argument names (as a set) and the whole call (values too) right or not."""
    name = call is not None and call.get("name") == expected["name"]
    arg_names = call is not None and set(call["arguments"]) == set(expected["arguments"])
    return {"name": name, "arg_names": arg_names, "call": name and call == expected}


def call_accuracy(model: Any, tok: Any, episodes: list[ToolEpisode]) -> dict[str, float]:
    """The share of greedy first turns with the right name, argument names, and whole call."""
    totals = {"name": 0, "arg_names": 0, "call": 0}
    for episode in episodes:
        budget = len(tok.encode(episode.call_text(), add_special_tokens=False)) + 16
        call = parsed_call(greedy_text(model, tok, prompt_ids(tok, episode), budget))
        for key, ok in score_call(call, episode.call).items():
            totals[key] += ok
    return {k: v / max(len(episodes), 1) for k, v in totals.items()}


def call_spans(episode: ToolEpisode) -> dict[str, list[tuple[int, int]]]:
    """Character spans of the name and of each value inside ``episode.call_text()``."""
    text = episode.call_text()
    name = json.dumps(episode.call["name"])
    start = text.index(name) + 1
    spans: dict[str, list[tuple[int, int]]] = {"name": [(start, start + len(name) - 2)]}
    spans["values"] = []
    cursor = text.index('"arguments"')
    for arg, v in episode.call["arguments"].items():
        cursor = text.index(json.dumps(arg) + ": ", cursor) + len(json.dumps(arg)) + 2
        spans["values"].append((cursor, cursor + len(json.dumps(v))))
    return spans


def copy_token_accuracy(model: Any, tok: Any, episodes: list[ToolEpisode]) -> dict[str, float]:
    """Teacher-forced next-token accuracy on the call's name and value tokens.

    A finer signal than whole calls while those stay at 0: it shows whether training moves
    the copying at all, token by token, before any call comes out whole.
    """
    import torch

    right = {"name": 0, "values": 0}
    seen = {"name": 0, "values": 0}
    for episode in episodes:
        prompt = prompt_ids(tok, episode)
        enc = tok(episode.call_text(), add_special_tokens=False, return_offsets_mapping=True)
        ids = prompt + list(enc["input_ids"])
        with torch.no_grad():
            guess = model(input_ids=torch.tensor([ids])).logits[0, len(prompt) - 1 : -1].argmax(-1)
        for key, spans in call_spans(episode).items():
            for i, (lo, hi) in enumerate(enc["offset_mapping"]):
                if any(lo < end and hi > begin for begin, end in spans):
                    seen[key] += 1
                    right[key] += int(guess[i]) == enc["input_ids"][i]
    return {k: right[k] / max(seen[k], 1) for k in right}


def long_prompt(tok: Any, rng: random.Random, length: int) -> list[int]:
    """A held-out episode's prompt grown to about ``length`` tokens with padding tools."""
    episode = schema_episode(rng, rng.randint(1, 4), rng.choice(SHAPES), held_out=True)
    extra: list[dict[str, Any]] = []
    size = len(prompt_ids(tok, episode))
    while size < length:  # top up by the mean size of the padding tools so far
        per_tool = (size - len(prompt_ids(tok, episode))) / len(extra) if extra else 200
        extra += padding_tools(rng, "chat", max(1, int((length - size) / per_tool)))
        size = len(prompt_ids(tok, _with(episode, extra)))
    return prompt_ids(tok, _with(episode, extra))


def _with(episode: ToolEpisode, extra: list[dict[str, Any]]) -> ToolEpisode:
    return ToolEpisode(episode.messages, extra + episode.tools, episode.call, "", "")


def eos_steps(model: Any, tok: Any, prompt: list[int], samples: int, gen: Any) -> list[int | None]:
    """For each of ``samples`` T=1 continuations, how many new tokens it wrote up to and with
    its EOS (None: no EOS within ``LONG_EOS_NEW_TOKENS``).

    The prompt is prefilled once (in chunks) and its KV cache copied for every sample.
    """
    import torch
    from transformers import DynamicCache

    from areal_runtime.models.hf_forward import cache_keyword

    # By keyword name: a transformers whose forward still calls it ``past_key_values`` takes an
    # unknown ``cache=`` silently and decodes every token without its context.
    cache = DynamicCache()
    keyword = cache_keyword(model)
    with torch.no_grad():
        for start in range(0, len(prompt), PREFILL_CHUNK):
            chunk = torch.tensor([prompt[start : start + PREFILL_CHUNK]])
            logits = model(input_ids=chunk, **{keyword: cache}, use_cache=True).logits
        cache.batch_repeat_interleave(samples)
        logits = logits[:, -1].repeat(samples, 1)
        ended: list[int | None] = [None] * samples
        for step in range(1, LONG_EOS_NEW_TOKENS + 1):
            probs = torch.softmax(logits.float(), dim=-1)
            nxt = torch.multinomial(probs, 1, generator=gen)
            for row in (nxt[:, 0] == tok.eos_token_id).nonzero()[:, 0].tolist():
                ended[row] = ended[row] or step
            if all(ended):
                break
            logits = model(input_ids=nxt, **{keyword: cache}, use_cache=True).logits[:, -1]
    return ended


def eos_rate(
    model: Any, tok: Any, length: int, prompts: int, samples: int, seed: int
) -> dict[str, float]:
    """The share of ``prompts`` padded prompts x ``samples`` samples that end their turn within
    64 new tokens (``rate``) and within 128 (``rate_128``).

    Both, because a right reply here is a tool call whose made-up names the tiny tokenizer
    splits into many tokens: half of the evaluation's calls need more than 64.
    """
    import torch

    rng = random.Random(seed)
    gen = torch.Generator().manual_seed(seed)
    steps: list[int | None] = []
    tokens = 0
    positions = model.config.max_position_embeddings
    for _ in range(prompts):
        prompt = long_prompt(tok, rng, length)
        if len(prompt) + LONG_EOS_NEW_TOKENS > positions:
            raise ValueError(
                f"a prompt padded to {length} tokens came to {len(prompt)}, and with "
                f"{LONG_EOS_NEW_TOKENS} new tokens it passes the model's {positions} positions: "
                f"ask for a length of at most {positions - 1024}"
            )
        tokens += len(prompt)
        steps += eos_steps(model, tok, prompt, samples, gen)
    return {
        "rate": sum(s is not None and s <= EOS_NEW_TOKENS for s in steps) / len(steps),
        "rate_128": sum(s is not None for s in steps) / len(steps),
        "mean_prompt_tokens": tokens / prompts,
    }


def evaluate(
    model: Any,
    tok: Any,
    n: int = 48,
    seed: int = 39,
    eos_lengths: tuple[int, ...] = (1024, 4096, 16384),
    eos_prompts: int = 2,
    eos_samples: int = 8,
    training_alphabet: bool = False,
    bare: bool = False,
    teacher_forced: bool = False,
) -> dict[str, Any]:
    """Every figure of the measure, as one dict (what ``main`` prints as JSON)."""
    results: dict[str, Any] = {}
    if bare:  # what a tool skill must not cost: train_default's held-out questions
        from areal_runtime.models.train_default import accuracy, split_pairs

        results["bare_arithmetic"] = accuracy(model, tok, split_pairs(0)[1])
    for n_tools in (1, 4):
        episodes = held_out_episodes(n_tools, n, seed + n_tools, names=ALPHABET_HELD_OUT)
        results[f"held_out_names_{n_tools}_tool"] = call_accuracy(model, tok, episodes)
        if teacher_forced:
            results[f"held_out_names_{n_tools}_tool_tokens"] = copy_token_accuracy(
                model, tok, episodes
            )
        episodes = held_out_episodes(n_tools, n, seed + n_tools)
        results[f"held_out_{n_tools}_tool"] = call_accuracy(model, tok, episodes)
        if teacher_forced:
            results[f"held_out_{n_tools}_tool_tokens"] = copy_token_accuracy(model, tok, episodes)
        if training_alphabet:  # fresh names, but built from the training syllables
            episodes = held_out_episodes(n_tools, n, seed + n_tools, held_out=False)
            results[f"fresh_train_alphabet_{n_tools}_tool"] = call_accuracy(model, tok, episodes)
            if teacher_forced:
                results[f"fresh_train_alphabet_{n_tools}_tool_tokens"] = copy_token_accuracy(
                    model, tok, episodes
                )
            episodes = held_out_episodes(n_tools, n, seed + n_tools, names=ALPHABET)
            results[f"fresh_alphabet_{n_tools}_tool"] = call_accuracy(model, tok, episodes)
    for length in eos_lengths:
        results[f"eos_{length}"] = eos_rate(model, tok, length, eos_prompts, eos_samples, seed)
    return results


def checkpoint_measure(model: Any, tok: Any, names: str, n: int = 24) -> dict[str, Any]:
    """The small measure ``train_tools --eval-every`` prints: bare arithmetic, then whole calls
    and teacher-forced copy tokens on ``n`` held-out prompts of 1 and 4 tools (``names``'
    evaluation vocabulary), and the letters-held-out tokens for comparison."""
    from areal_runtime.models.train_default import accuracy, split_pairs

    figures: dict[str, Any] = {"bare": accuracy(model, tok, split_pairs(0)[1][:50])}
    for n_tools in (1, 4):
        episodes = held_out_episodes(n_tools, n, 39 + n_tools, names=VOCABULARIES[names][1])
        figures[f"call_{n_tools}"] = call_accuracy(model, tok, episodes)
        figures[f"tokens_{n_tools}"] = copy_token_accuracy(model, tok, episodes)
        letters = held_out_episodes(n_tools, n, 39 + n_tools)
        figures[f"letters_tokens_{n_tools}"] = copy_token_accuracy(model, tok, letters)
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", type=Path, default=MODEL_DIR, help="a saved model folder")
    parser.add_argument("--n", type=int, default=48, help="episodes per tool count")
    parser.add_argument("--seed", type=int, default=39)
    parser.add_argument(
        "--eos-lengths", default="1024,4096,16384", help="prompt lengths, comma-separated"
    )
    parser.add_argument("--eos-prompts", type=int, default=2, help="padded prompts per length")
    parser.add_argument("--eos-samples", type=int, default=8, help="T=1 samples per prompt")
    parser.add_argument(
        "--training-alphabet", action="store_true", help="also score names of training syllables"
    )
    parser.add_argument(
        "--bare", action="store_true", help="also bare arithmetic accuracy (train_default's)"
    )
    parser.add_argument(
        "--teacher-forced", action="store_true", help="also name/value token accuracy"
    )
    args = parser.parse_args()
    import torch
    from transformers import AutoModelForCausalLM

    torch.set_num_threads(1)
    model = AutoModelForCausalLM.from_pretrained(str(args.model), dtype="float32").eval()
    lengths = tuple(int(x) for x in args.eos_lengths.split(",") if x)
    start = time.process_time()
    results = evaluate(
        model, tiny_tokenizer(), args.n, args.seed, lengths, args.eos_prompts, args.eos_samples,
        args.training_alphabet, args.bare, args.teacher_forced,
    )  # fmt: skip
    results["cpu_s"] = round(time.process_time() - start, 1)
    print(json.dumps({"model": str(args.model), **results}), flush=True)


if __name__ == "__main__":
    main()
