# SPDX-License-Identifier: Apache-2.0
"""ARL5xx: trajectories that will not train as sampled, seen in the source of one function.

PPO-style training needs, for every generated token, the id that was sampled, the logprob the
sampler gave it (the behaviour policy of the importance ratio) and a loss mask that is 1 on the
generated tokens only. Each rule recognises one way a workflow loses one of them:

* ARL501 the completion is re-tokenized from its decoded text (or from the text a chat API
  returned) and those ids are trained;
* ARL502 the generated tokens' logprobs are placeholders although ``resp.output_logprobs`` exists;
* ARL503 the loss mask is all ones over a sequence that includes the prompt;
* ARL504 a multi-turn loop re-applies the chat template to the conversation, with earlier
  completions put back as text, and trains the re-encoded ids.

The facts each check reads (what a function binds and trains, which ids were re-made from text,
which conversations hold completions as text) are recorded and computed by
``areal_lint.analysis.trajectory_facts``; this module holds the rules and judges each
function's record when the function ends.
"""

from __future__ import annotations

from typing import ClassVar

import libcst as cst

from areal_lint.analysis.trajectory_facts import (
    IDS_KEYS,
    FunctionRecord,
    TrajectoryFacts,
    TrajectoryRecorder,
    last_name,
    whole_name,
)
from areal_lint.context import LintContext
from areal_lint.names import dotted
from areal_lint.rules.base import FamilyVisitor, Hit, Rule, check


class RetokenizedCompletion(Rule):
    """ARL501 completion re-tokenized from its text and trained.

    What: the completion is decoded (``tokenizer.decode(resp.output_tokens)``), or taken as the
    text a chat API returned (``c.choices[0].message.content``, ``r.output_text``,
    ``m.content[0].text``, a scaffolding output's ``.text``), encoded (``tokenizer.encode(text)``,
    ``tokenizer(text)["input_ids"]``) and those ids are what the trajectory trains (its
    ``input_ids``, ``resp.output_tokens = ...``).
    Why: decode then encode is not the identity: BPE merges differently across the boundary,
    special tokens and whitespace change, so the trained ids are not the ones the model sampled
    and the sampler's logprobs (and the loss mask's length) no longer line up with them.
    Example: ``text = tok.decode(resp.output_tokens); ids = prompt_ids + tok.encode(text)``,
    then ``dict(input_ids=torch.tensor(ids), ...)``.
    Fix: train on ``resp.output_tokens`` (``seq = resp.input_tokens + resp.output_tokens``) and
    use the decoded text only for the reward.
    """

    code = "ARL501"
    also_with: ClassVar[dict[str, str]] = {
        "ARL901": "the decode that made the text (opt-in CPU cost) stays when the re-encode is "
        "replaced by the sampled ids"
    }
    message = "{name}() re-tokenizes the decoded completion and trains those ids; train on {resp}.output_tokens, the ids that were sampled"


class PlaceholderLogprobs(Rule):
    """ARL502 placeholder logprobs for generated tokens.

    What: the logprobs of the generated tokens are filled with a constant
    (``[0.0] * len(resp.output_tokens)``, ``[0.0] * resp.output_len``,
    ``torch.zeros(len(resp.output_tokens))``) in a ``logprobs`` field while the response has
    ``output_logprobs``. Constants for the prompt part (``[0.0] * resp.input_len``) are fine.
    Why: decoupled PPO divides by the behaviour policy's probability of each sampled token; a
    logprob of 0.0 says that probability was 1, so the importance ratio and its clipping are
    wrong for every token of every trajectory.
    Example: ``logprobs = [0.0] * resp.input_len + [0.0] * len(resp.output_tokens)``.
    Fix: ``logprobs = [0.0] * resp.input_len + resp.output_logprobs``.
    """

    code = "ARL502"
    message = "the generated tokens' logprobs are placeholders; use {resp}.output_logprobs, the sampler's logprobs the importance ratio needs"


class PromptInLossMask(Rule):
    """ARL503 loss mask that covers the prompt.

    What: a ``loss_mask`` of ones over the whole sequence (``[1] * len(seq)`` where ``seq``
    holds the prompt and the completion, ``torch.ones_like(input_ids)``,
    ``[1] * (resp.input_len + resp.output_len)``).
    Why: the policy is then trained to produce the prompt it was given, with logprobs that were
    never sampled; the loss is dominated by prompt tokens.
    Example: ``seq = resp.input_tokens + resp.output_tokens; loss_mask = [1] * len(seq)``.
    Fix: ``loss_mask = [0] * resp.input_len + [1] * resp.output_len``.
    """

    code = "ARL503"
    message = "the loss mask covers the prompt tokens; use [0] * {resp}.input_len + [1] * {resp}.output_len"


class RetemplatedConversation(Rule):
    """ARL504 multi-turn conversation re-templated and trained from re-encoded text.

    What: a conversation holds completions as text (a loop appends each turn's decoded answer,
    ``messages.append({"role": "assistant", "content": text})``; a comprehension builds the
    turns, ``[{"role": "assistant", "content": tok.decode(r.output_tokens)} for r in resps]``;
    or the last answer is put in place, ``messages + [{"role": "assistant", "content":
    text}]``), and the chat template is applied to it; those re-encoded ids, never given to the
    model as a prompt, are what the trajectory trains.
    Why: the earlier turns' completions are trained from ids re-made from their text, not the
    ids that were sampled (ARL501 for every turn), and the template may render an assistant
    turn differently from how it was generated (thinking blocks dropped, whitespace).
    Example: ``for turn in range(n): ... messages.append({"role": "assistant", "content":
    tok.decode(resp.output_tokens)})`` then ``ids = tok.apply_chat_template(messages)`` and
    ``dict(input_ids=torch.tensor(ids), ...)``.
    Fix: accumulate the sampled ids turn by turn (``seq += resp.input_tokens[len(seq):] +
    resp.output_tokens``, mask 0 on the new prompt part, 1 on the output), as AReaL's
    ``MultiTurnWorkflow`` does, or use the ids each turn's ``resp`` carries.
    """

    code = "ARL504"
    message = "{name}() re-templates the conversation with earlier completions as text and trains the re-encoded ids; accumulate each turn's {resp}.input_tokens + {resp}.output_tokens instead"


@check("ARL501")
def retokenized_completion(ctx: LintContext, call: cst.Call, facts: TrajectoryFacts) -> Hit | None:
    if id(call) in facts.template_calls:
        return None  # ARL504's
    return Hit({"name": dotted(call.func) or last_name(call.func), "resp": facts.resp})


@check("ARL502")
def placeholder_logprobs(ctx: LintContext, node: cst.CSTNode, facts: TrajectoryFacts) -> Hit | None:
    return Hit({"resp": facts.resp})


@check("ARL503")
def prompt_in_loss_mask(ctx: LintContext, node: cst.CSTNode, facts: TrajectoryFacts) -> Hit | None:
    return Hit({"resp": facts.resp})


@check("ARL504")
def retemplated_conversation(
    ctx: LintContext, call: cst.Call, facts: TrajectoryFacts
) -> Hit | None:
    if id(call) not in facts.template_calls or facts.retemplated_prompt(call):
        return None
    return Hit({"name": dotted(call.func) or last_name(call.func), "resp": facts.resp})


class TrajectoriesVisitor(TrajectoryRecorder, FamilyVisitor):
    """Judges each function's record (``trajectory_facts``) when the function ends."""

    def __init__(self, ctx: LintContext, reporter) -> None:  # type: ignore[no-untyped-def]
        FamilyVisitor.__init__(self, ctx, reporter)
        TrajectoryRecorder.__init__(self)

    def judge(self, fn: FunctionRecord) -> None:
        facts = TrajectoryFacts(fn)
        reported: set[int] = set()

        def report(check_fn, node: cst.CSTNode) -> None:  # type: ignore[no-untyped-def]
            if id(node) not in reported:
                reported.add(id(node))
                self.run(check_fn, node, facts)

        trained = {
            name
            for key, value, prompt in fn.sinks
            if key == "input_ids" and not prompt and (name := whole_name(value)) is not None
        }
        full = {
            name
            for name, value, _ in fn.binds
            if facts.covers_prompt(value, trained) and facts.mentions_output(value)
        }
        for key, value, prompt in fn.sinks:
            if prompt:
                continue
            if key in IDS_KEYS:
                for origin in facts.all_ids_from(value):
                    report(
                        retemplated_conversation
                        if id(origin) in facts.template_calls
                        else retokenized_completion,
                        origin,
                    )
        logprob_values = [v for k, v, p in fn.sinks if "logprob" in k and not p]
        logprob_values += [v for n, v, _ in fn.binds if "logp" in n]
        for value in logprob_values:
            for node in facts.placeholders(value):
                report(placeholder_logprobs, node)
        mask_values = [v for k, v, p in fn.sinks if "loss_mask" in k and not p]
        mask_values += [v for n, v, _ in fn.binds if "loss_mask" in n]
        for value in mask_values:
            for node in facts.full_masks(value, full, trained):
                report(prompt_in_loss_mask, node)


RULES = [RetokenizedCompletion, PlaceholderLogprobs, PromptInLossMask, RetemplatedConversation]
