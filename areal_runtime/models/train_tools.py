# SPDX-License-Identifier: Apache-2.0
"""Teach the embedded model to call tools: ``python -m areal_runtime.models.train_tools``.

Run after ``train_default`` (it fine-tunes the arithmetic model that script saves). A fixed
number of supervised steps on one CPU thread on synthetic episodes from ``tool_episodes``: with
tools in the prompt the model calls the sum tool, and after the tool's result it answers with
it; bare questions stay in the mix so their accuracy holds. The skill is meant to stay partial
(a bounded number of steps, few tool shapes) so that RL has room to improve it; the number of
steps that gets there is not settled yet (see BENCHMARKS.md, "Tool agents on the embedded
model"). The furthest run so far, in two stages:

    python -m areal_runtime.models.train_tools --steps 150 --out /tmp/stage1
    python -m areal_runtime.models.train_tools --base /tmp/stage1 --resume --steps 200 \
        --lr 2e-3 --usual-share 1.0 --alone-share 0.8
"""

from __future__ import annotations

import argparse
import json
import random
import re
import time
from pathlib import Path
from typing import Any

from areal_runtime.models.default_model import MODEL_DIR
from areal_runtime.models.tokenizers import tiny_tokenizer
from areal_runtime.models.tool_episodes import Split, ToolEpisode, sample_episode
from areal_runtime.models.train_default import accuracy, encode_example, lm_batch, split_pairs

SKILLS_KEY = "areal_devkit_skills"
CALL = re.compile(r"<tool_call>(.*?)</tool_call>", re.DOTALL)


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


def parsed_call(text: str) -> dict[str, Any] | None:
    """The first well-formed ``<tool_call>`` in ``text`` (name + arguments object), or None."""
    match = CALL.search(text)
    if match is None:
        return None
    try:
        call = json.loads(match.group(1))
    except json.JSONDecodeError:
        return None
    if not isinstance(call, dict) or not isinstance(call.get("arguments"), dict):
        return None
    return call


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


def train(
    base: Path,
    out: Path,
    steps: int,
    seed: int,
    batch: int,
    bare_share: float,
    lr: float,
    save_every: int = 0,
    evaluate: bool = True,
    resume: bool = False,
    usual_share: float | None = None,
    alone_share: float = 0.6,
) -> None:
    import torch

    torch.set_num_threads(1)
    torch.manual_seed(seed)
    tok = tiny_tokenizer()
    model = load_base(base, resume)
    train_pairs, held_out = split_pairs(0)  # train_default's split (its seed)
    bare = [encode_example(tok, a, b) for a, b in train_pairs]
    rng = random.Random(seed)
    opt = torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)
    model.train()
    start = time.time()
    for step in range(1, steps + 1):
        n_bare = int(batch * bare_share)
        examples = rng.sample(bare, n_bare)
        while len(examples) < batch:
            episode = sample_episode(rng, "train", usual_share=usual_share, alone_share=alone_share)
            examples += encode_turns(tok, episode)
        ids, labels = lm_batch(examples[:batch], tok.pad_token_id)
        loss = model(input_ids=ids, labels=labels).loss
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        if step % 25 == 0:
            print(f"step {step} loss {loss.item():.4f} ({time.time() - start:.0f}s)", flush=True)
        if save_every and step % save_every == 0 and step < steps:
            _save(model, out / f"step-{step}")
            model.train()
    model.eval()
    if evaluate:
        report(model, tok, held_out)
    _save(model, out)


def _save(model: Any, out: Path) -> None:
    setattr(model.config, SKILLS_KEY, ["arithmetic", "tools"])
    out.mkdir(parents=True, exist_ok=True)
    model.eval().save_pretrained(str(out))
    print(f"saved {out}", flush=True)


def report(model: Any, tok: Any, held_out_pairs: list[tuple[int, int]]) -> None:
    """Bare accuracy (train_default's measure) and the tool skill on seen and unseen names."""
    import torch

    print(
        f"bare questions, greedy accuracy on held-out pairs: {accuracy(model, tok, held_out_pairs):.2f}"
    )
    for split in ("train", "held_out"):
        episodes = evaluation_episodes(split, 60)
        greedy = tool_skill(model, tok, episodes, greedy=True)
        torch.manual_seed(0)
        sampled = tool_skill(model, tok, episodes, greedy=False)
        print(f"tool episodes, {split} names: greedy {_fmt(greedy)}; sampled (T=1) {_fmt(sampled)}")


def _fmt(scores: dict[str, float]) -> str:
    return ", ".join(f"{k} {v:.2f}" for k, v in scores.items())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--base", type=Path, default=MODEL_DIR, help="the arithmetic model")
    parser.add_argument("--out", type=Path, default=MODEL_DIR, help="where to save")
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--bare-share", type=float, default=0.3)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--save-every", type=int, default=0, help="also save out/step-N")
    parser.add_argument("--no-eval", action="store_true", help="skip the final report")
    parser.add_argument(
        "--resume", action="store_true", help="continue from a tool-trained --base (2nd stage)"
    )
    parser.add_argument("--usual-share", type=float, help="share of add(a, b) episodes")
    parser.add_argument("--alone-share", type=float, default=0.6, help="share with one tool")
    args = parser.parse_args()
    train(
        args.base, args.out, args.steps, args.seed, args.batch, args.bare_share, args.lr,
        args.save_every, not args.no_eval, args.resume, args.usual_share, args.alone_share,
    )  # fmt: skip


if __name__ == "__main__":
    main()
