# SPDX-License-Identifier: Apache-2.0
"""ARL9xx: noisy rules, off unless enabled with ``--arl-enable``."""

from __future__ import annotations

from typing import ClassVar

import libcst as cst

from areal_lint.context import LintContext
from areal_lint.names import self_attr
from areal_lint.rules.base import FamilyVisitor, Hit, Rule, check

CPU_HEAVY = {"apply_chat_template", "encode", "decode", "batch_decode", "deepcopy"}


class CPUHeavyInEpisode(Rule):
    """ARL901 CPU-heavy synchronous work in an episode (opt-in).

    What: tokenizer ``apply_chat_template``/``encode``/``decode`` and ``copy.deepcopy`` called
    directly in an episode.
    Why: on long conversations these take milliseconds to seconds of pure CPU on the loop.
    Example: ``ids = self.tokenizer.apply_chat_template(messages, tokenize=True)``.
    Fix: ``await asyncio.to_thread(self.tokenizer.apply_chat_template, messages, ...)`` when
    conversations are long; short prompts are fine, hence opt-in.
    """

    code = "ARL901"
    also_with: ClassVar[dict[str, str]] = {
        "ARL901": "each tokenizer call on the loop costs its own CPU time"
    }
    message = "{name}() is CPU-heavy on the event loop; consider await asyncio.to_thread(...)"
    opt_in = True


class SharedStateMutation(Rule):
    """ARL902 episode assigns to ``self`` (opt-in).

    What: ``self.x = ...`` inside an episode, outside a lazy-init guard.
    Why: one workflow instance runs many episodes concurrently; shared attributes race.
    Example: ``self.history = []`` at the start of ``arun_episode``.
    Fix: keep per-episode state in locals.
    """

    code = "ARL902"
    message = "self.{name} is set inside an episode; concurrent episodes share it, keep it local"
    opt_in = True


@check("ARL901")
def cpu_heavy_in_episode(ctx: LintContext, call: cst.Call) -> Hit | None:
    if not ctx.frame.is_episode or ctx.is_offload_argument(call):
        return None
    func = call.func
    if isinstance(func, cst.Attribute) and func.attr.value in CPU_HEAVY:
        return Hit({"name": func.attr.value})
    return None


@check("ARL902")
def shared_state_mutation(ctx: LintContext, target: cst.BaseExpression) -> Hit | None:
    if not ctx.frame.is_episode:
        return None
    attr = self_attr(target)
    if attr is not None and not ctx.guarded(f"self.{attr}"):
        return Hit({"name": attr})
    return None


class OptInVisitor(FamilyVisitor):
    """Noisy rules; each runs only when its code is given to ``--arl-enable``."""

    def visit_Call(self, node: cst.Call) -> None:
        if "ARL901" in self.ctx.options.enable:
            self.run(cpu_heavy_in_episode, node)

    def visit_Assign(self, node: cst.Assign) -> None:
        if "ARL902" in self.ctx.options.enable:
            for target in node.targets:
                self.run(shared_state_mutation, target.target)


RULES = [CPUHeavyInEpisode, SharedStateMutation]
