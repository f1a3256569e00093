# SPDX-License-Identifier: Apache-2.0
"""How a request field is handled: the rule type each API's ``FIELDS`` table is made of.

The proxy records the tokens the engine sampled as the trajectory. A field is accepted when the
agent's view of the conversation stays true: either the proxy honours it (``used``), or it cannot
change which tokens are sampled (``ignored``: metadata, cache control, betas, thinking
settings...). A field is ``refused``, with a 400 that names it, for the values whose honouring
was the client's premise and which the proxy cannot honour: then the recorded trajectory would
differ from what the client believes it got (a penalty not applied, a schema not enforced, a
server-side tool never run); its other values are accepted. Fields a table does not know are
refused too, pointing here: a new client field is added to its API's table (and the docs
regenerated) once someone has decided which kind it is.

``docs/proxy_fields.md`` renders every API's table (``field_docs.py``); a test keeps them equal.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from areal_runtime.errors import InvalidRequestError

Handling = Literal["used", "ignored", "refused"]
DOC_PATH = "docs/proxy_fields.md"


def never(value: Any) -> bool:
    return False


def truthy(value: Any) -> bool:
    return bool(value)


def is_set(value: Any) -> bool:
    return value is not None


@dataclass(frozen=True)
class FieldRule:
    """One request field: how the proxy treats it and, if ever, which values it refuses.

    ``handling``: ``used`` (honoured), ``ignored`` (accepted with any value: it cannot change
    the sampled tokens) or ``refused`` (a 400 for the values ``refused_when`` names, which the
    proxy cannot honour; other values are accepted). Only a ``refused`` rule refuses anything.
    """

    field: str
    handling: Handling
    why: str
    refused_when: str = ""  # the refused values, in words ("" = never refused)
    refuses: Callable[[Any], bool] = never

    def __post_init__(self) -> None:
        can_refuse = bool(self.refused_when) or self.refuses is not never
        if (self.handling == "refused") != (bool(self.refused_when) and self.refuses is not never):
            raise ValueError(
                f"field rule {self.field!r}: a 'refused' rule needs refused_when and a "
                f"predicate, and only a 'refused' rule may refuse (handling={self.handling!r}, "
                f"refuses values: {can_refuse})"
            )


def used(field: str, why: str = "honoured by the engine") -> FieldRule:
    return FieldRule(field, "used", why)


def ignored(field: str, why: str) -> FieldRule:
    return FieldRule(field, "ignored", why)


def refused(field: str, why: str, refused_when: str, refuses: Callable[[Any], bool]) -> FieldRule:
    return FieldRule(field, "refused", why, refused_when, refuses)


# Reasons several APIs share.
SERVER_IGNORES = "only steers the hosted model or its billing; sampling does not read it"
EFFORT = "an effort hint for hosted reasoning models; the local sampling has no such knob"
CACHE = "prompt caching is a server-side cost optimisation; the tokens sampled are the same"
ONE_MODEL = "the proxy serves one model; the reply echoes the name"
TOOL_CHOICE = "'none' drops the tools; other values leave the choice to the model"
TEMPLATE_KWARGS = "passed to the chat template"
TOTAL_TOKENS = "AReaL's extension: prompt + completion cap"
PARALLEL_TOOLS = "the model may call several tools; all are returned"

# The same rule in chat completions and the Responses API.
TOP_LOGPROBS = refused(
    "top_logprobs",
    "the engine returns the sampled token's logprob only, not alternatives",
    "non-zero",
    truthy,
)


def check_fields(
    rules: tuple[FieldRule, ...], route: str, table: str, body: dict[str, Any]
) -> None:
    """Refuse, naming the field, what ``rules`` refuse or do not know (``table``: their file)."""
    known = {rule.field: rule for rule in rules}
    unknown = sorted(k for k in body if k not in known)
    if unknown:
        raise InvalidRequestError(
            f"unsupported field(s) {unknown} for {route}: the proxy does not know whether "
            f"they change what is sampled; drop them, or add them to FIELDS in {table} "
            f"(see {DOC_PATH})"
        )
    for name, value in body.items():
        rule = known[name]
        if rule.refuses(value):
            raise InvalidRequestError(
                f"{name} is not supported by the proxy when {rule.refused_when} "
                f"(got {value!r}): {rule.why}; leave it out"
            )
