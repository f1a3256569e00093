# SPDX-License-Identifier: Apache-2.0
"""The completions of one session: parent links, rewards, discount and export.

Same rules as AReaL's ``InteractionCache``: the parent of a completion is the earlier one whose
messages plus reply form the longest strict prefix of the new messages; the turn discount walks
completions in reverse insertion order as a return-to-go; ``individual`` exports every complete
completion, ``concat`` only the leaves. Differences: an unknown id raises an error naming it
(AReaL's proxy answered 400 and its client swallowed it), and discounting twice is refused.

A completion added with ``delivered=False`` is pending until the proxy has handed it to the
agent: pending completions are never parents, never take a reward without an id and are never
exported, and :meth:`discard` removes one the agent never got (AReaL records them all).
"""

from __future__ import annotations

import json
from collections import OrderedDict
from typing import Any, Literal

from areal_runtime.errors import UnknownCompletionError
from areal_runtime.experimental.openai.proxy.request import base_id_of, samples_of
from areal_runtime.experimental.openai.types import InteractionWithTokenLogpReward

ExportStyle = Literal["individual", "concat"]


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


class InteractionCache:
    """Interactions of one session, in insertion order."""

    def __init__(self) -> None:
        self._items: OrderedDict[str, InteractionWithTokenLogpReward] = OrderedDict()
        self._discounted = False
        self._pending: set[str] = set()  # base ids of completions not yet delivered

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, interaction_id: object) -> bool:
        return interaction_id in self._items

    def __getitem__(self, interaction_id: str) -> InteractionWithTokenLogpReward:
        return self._items[interaction_id]

    def get(self, interaction_id: str) -> InteractionWithTokenLogpReward | None:
        return self._items.get(interaction_id)

    def ids(self) -> list[str]:
        return list(self._items)

    def delivered_ids(self) -> list[str]:
        """Ids of the completions the agent received, in insertion order."""
        return [k for k in self._items if not self._is_pending(k)]

    def add(self, interaction: InteractionWithTokenLogpReward, *, delivered: bool = True) -> None:
        """Insert ``interaction`` and link it to its parent (longest recorded prefix)."""
        interaction.parent = self.find_parent(interaction.messages)
        self._items[interaction.interaction_id] = interaction
        if not delivered:
            self._pending.add(base_id_of(interaction.interaction_id))

    def mark_delivered(self, base_id: str) -> None:
        """The agent received ``base_id`` (and its ``base_id/i`` siblings from ``n > 1``)."""
        self._pending.discard(base_id)

    def discard(self, base_id: str) -> None:
        """Forget ``base_id`` and its siblings: the agent never received them."""
        self._pending.discard(base_id)
        for key in [k for k in self._items if samples_of(base_id, k)]:
            del self._items[key]

    def _is_pending(self, interaction_id: str) -> bool:
        return bool(self._pending) and base_id_of(interaction_id) in self._pending

    def find_parent(self, messages: list[dict[str, Any]]) -> InteractionWithTokenLogpReward | None:
        """The completion whose messages plus reply are the longest strict prefix of these."""
        new = [normalize_message(m) for m in messages]
        best, best_len = None, -1
        for key, candidate in self._items.items():
            if candidate.output_message is None or self._is_pending(key):
                continue
            history = [normalize_message(m) for m in candidate.messages]
            history.append(normalize_message(candidate.output_message))
            if (
                len(history) < len(new)
                and new[: len(history)] == history
                and len(history) > best_len
            ):
                best, best_len = candidate, len(history)
        return best

    def set_reward(self, interaction_id: str, reward: float) -> None:
        matched = [item for key, item in self._items.items() if samples_of(interaction_id, key)]
        if not matched:
            known = ", ".join(self._items) or "none"
            raise UnknownCompletionError(
                f"no completion with id {interaction_id!r} in this session (known: {known})"
            )
        for item in matched:
            item.reward = float(reward)

    def set_last_reward(self, reward: float) -> None:
        """Reward the last completion the agent received (one still in flight is skipped)."""
        if not self._items:
            raise ValueError("the agent made no chat completion, so there is nothing to reward")
        last = next((k for k in reversed(self._items) if not self._is_pending(k)), None)
        if last is None:
            raise ValueError(
                "no completion has reached the agent yet (its requests are in flight or its "
                "client disconnected), so there is nothing to reward"
            )
        self.set_reward(base_id_of(last), reward)

    def apply_reward_discount(self, turn_discount: float = 1.0) -> None:
        """Give each delivered completion the discounted return-to-go, newest to oldest."""
        if self._discounted:
            raise RuntimeError("apply_reward_discount was already called on this session")
        self._discounted = True
        running = 0.0
        for key, item in reversed(self._items.items()):
            if self._is_pending(key):
                continue
            running = running * turn_discount + (item.reward or 0.0)
            item.reward = running

    def export(
        self, style: ExportStyle = "individual"
    ) -> dict[str, InteractionWithTokenLogpReward]:
        complete = {
            k: v for k, v in self._items.items() if v.is_complete and not self._is_pending(k)
        }
        if style == "individual":
            return complete
        if style == "concat":
            wrong = [k for k, v in complete.items() if v.chat_template_type != "concat"]
            if wrong:
                raise ValueError(
                    f"the concat export needs chat_template_type='concat' on every completion; "
                    f"{wrong[:3]} were built with 'hf'"
                )
            parents = {id(v.parent) for v in complete.values() if v.parent is not None}
            return {k: v for k, v in complete.items() if id(v) not in parents}
        raise ValueError(f"unknown export style {style!r}; use 'individual' or 'concat'")
