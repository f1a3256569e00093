# SPDX-License-Identifier: Apache-2.0
"""The completions of one session: parent links, rewards, discount and export.

AReaL's ``InteractionCache``: an ordered dict of interactions by id; ``cache[id] = item`` links
``item`` to its parent, the earlier completion whose messages plus reply form the longest prefix
of the new messages. The turn discount walks completions in reverse insertion order as
a return-to-go; ``individual`` exports every complete completion, ``concat`` only the leaves.
Messages are compared by what they say (role, text, tool calls with their arguments parsed),
so an SDK that re-serialises a message with extra keys or other spacing still finds its parent.
Differences: an unknown id raises an error naming it (AReaL's proxy answered 400 and its client
swallowed it).

A completion added with ``delivered=False`` is pending until the proxy has handed it to the
agent: pending completions are never parents, never take a reward without an id and are never
exported, and :meth:`discard` removes one the agent never got (AReaL records them all).
"""

from __future__ import annotations

import json
import logging
from collections import OrderedDict
from typing import Any, Literal

from areal_runtime.errors import UnknownCompletionError
from areal_runtime.experimental.openai.proxy.request import base_id_of, samples_of
from areal_runtime.experimental.openai.types import InteractionWithTokenLogpReward

ExportStyle = Literal["individual", "concat"]
EXPORT_STYLES = ("individual", "concat")
logger = logging.getLogger("areal_runtime.openai_cache")


def normalize_message(message: dict[str, Any]) -> tuple:
    """What identifies a message for prefix matching (SDK dumps add keys like ``refusal``)."""
    content = message.get("content")
    if isinstance(content, list):
        content = "".join(part.get("text", "") for part in content if isinstance(part, dict))
    calls = tuple(
        (c.get("function", {}).get("name"), _canonical_json(c.get("function", {}).get("arguments")))
        for c in message.get("tool_calls") or []
    )
    return (message.get("role"), content or "", calls, message.get("tool_call_id"))


def _canonical_json(text: Any) -> Any:
    """Tool-call arguments compared by value: SDKs re-serialise them with other spacing."""
    try:
        return json.dumps(json.loads(text), sort_keys=True)
    except (TypeError, ValueError):
        return text


def check_export_style(style: Any) -> None:
    """A ValueError for a style other than ``individual`` / ``concat`` (AReaL's message)."""
    if style not in EXPORT_STYLES:
        raise ValueError(
            f"Invalid export interactions style {style!r} (unknown export style {style!r}; "
            "use 'individual' or 'concat')"
        )


class InteractionCache(OrderedDict[str, InteractionWithTokenLogpReward]):
    """Interactions of one session by id, in insertion order (AReaL's ordered dict)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # Set before OrderedDict.__init__, which inserts through __setitem__.
        self._apply_reward_discount_called = False
        self._total_reward = 0.0
        self._pending: set[str] = set()  # base ids of completions not yet delivered
        super().__init__(*args, **kwargs)

    def __setitem__(self, key: str, value: InteractionWithTokenLogpReward) -> None:
        """Insert ``value``, linking it to its parent (the longest recorded prefix)."""
        if value.messages is None:
            raise ValueError("Interaction messages must be set to find parent relationship.")
        if key not in self:
            value.parent = self.find_parent(value.messages)
        super().__setitem__(key, value)

    @property
    def last_interaction_id(self) -> str:
        return next(reversed(self))

    @property
    def total_reward(self) -> float:
        return self._total_reward

    def delivered_ids(self) -> list[str]:
        """Ids of the completions the agent received, in insertion order."""
        return [k for k in self if not self._is_pending(k)]

    def add(self, interaction: InteractionWithTokenLogpReward, *, delivered: bool = True) -> None:
        """Insert ``interaction`` under its id; ``delivered=False`` records it as pending."""
        key = interaction.interaction_id
        if key is None:
            raise ValueError("an interaction needs an id (a completion, a response or its id)")
        self[key] = interaction
        if not delivered:
            self._pending.add(base_id_of(key))

    def mark_delivered(self, base_id: str) -> None:
        """The agent received ``base_id`` (and its ``base_id/i`` siblings from ``n > 1``)."""
        self._pending.discard(base_id)

    def discard(self, base_id: str) -> None:
        """Forget ``base_id`` and its siblings: the agent never received them."""
        self._pending.discard(base_id)
        for key in [k for k in self if samples_of(base_id, k)]:
            del self[key]

    def _is_pending(self, interaction_id: str) -> bool:
        return bool(self._pending) and base_id_of(interaction_id) in self._pending

    def find_parent(self, messages: list[dict[str, Any]]) -> InteractionWithTokenLogpReward | None:
        """The completion whose messages plus reply are the longest prefix of these (AReaL's
        rule: equal counts too, a request that only continues the reply)."""
        new = [normalize_message(m) for m in messages]
        best, best_len = None, -1
        for key, candidate in self.items():
            if not candidate.output_message_list or self._is_pending(key):
                continue  # still generating, or never delivered: not a conversation yet
            history = [normalize_message(m) for m in candidate.messages or []]
            history += [normalize_message(m) for m in candidate.output_message_list]
            if (
                len(history) <= len(new)
                and new[: len(history)] == history
                and len(history) > best_len
            ):
                best, best_len = candidate, len(history)
        return best

    def set_reward(self, interaction_id: str, reward: float) -> None:
        """Reward ``interaction_id`` and the extra samples (``id/i``) of its request."""
        matched = [item for key, item in self.items() if samples_of(interaction_id, key)]
        if not matched:
            known = ", ".join(self) or "none"
            raise UnknownCompletionError(
                f"no completion with id {interaction_id!r} in this session (known: {known})"
            )
        for item in matched:
            self._total_reward += float(reward) - (item.reward or 0.0)
            item.reward = float(reward)

    def set_last_reward(self, reward: float) -> None:
        """Reward the last completion the agent received (one still in flight is skipped)."""
        if not self:
            raise ValueError("the agent made no chat completion, so there is nothing to reward")
        last = next((k for k in reversed(self) if not self._is_pending(k)), None)
        if last is None:
            raise ValueError(
                "no completion has reached the agent yet (its requests are in flight or its "
                "client disconnected), so there is nothing to reward"
            )
        self.set_reward(base_id_of(last), reward)

    def apply_reward_discount(
        self, turn_discount: float = 1.0
    ) -> dict[str, InteractionWithTokenLogpReward]:
        """Give each delivered completion the discounted return-to-go, newest to oldest.

        Only once: a second pass would discount the discounted rewards again.
        """
        if self._apply_reward_discount_called:
            raise RuntimeError("apply_reward_discount should only be called once.")
        self._apply_reward_discount_called = True
        running = 0.0
        delivered = [(k, v) for k, v in reversed(self.items()) if not self._is_pending(k)]
        if delivered and delivered[0][1].reward is None:
            logger.warning("the last completion has no reward; it and the unset ones count 0")
        for _, item in delivered:
            running = running * turn_discount + (item.reward or 0.0)
            item.reward = running
        return dict(self)

    def export_interactions(
        self, style: str, reward_discount: float | None = None
    ) -> dict[str, InteractionWithTokenLogpReward]:
        """The delivered, complete completions (``individual``) or the leaves (``concat``).

        ``reward_discount`` applies :meth:`apply_reward_discount` first, unless it already ran.
        """
        check_export_style(style)
        if reward_discount is not None and not self._apply_reward_discount_called:
            self.apply_reward_discount(turn_discount=reward_discount)
        complete: dict[str, InteractionWithTokenLogpReward] = {}
        for key, item in self.items():
            if item.output_message_list is None or self._is_pending(key):
                continue  # still generating, or never delivered
            if item.interaction_id is None:
                continue
            if item.interaction_id != key:
                raise ValueError(f"Interaction ID mismatch: {item.interaction_id} != {key}")
            complete[key] = item
        if style == "individual":
            return complete
        wrong = [k for k, v in complete.items() if v.chat_template_type != "concat"]
        if wrong:
            raise ValueError(
                "Cannot export interactions in 'concat' style when a completion was built "
                f"with chat_template_type='hf' ({wrong[:3]}): the template may add or drop "
                "tokens (think blocks), so the conversation tree cannot be rebuilt from tokens. "
                "Set chat_template_type='concat' or export 'individual'"
            )
        parents = {id(v.parent) for v in complete.values() if v.parent is not None}
        return {k: v for k, v in complete.items() if id(v) not in parents}
