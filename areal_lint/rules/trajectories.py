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

The family records, per function, what names are bound to (in order, with ``+=``, ``.append``
and ``.extend`` counted as bindings), where values reach a trained field (a dict key or keyword
``input_ids``/``logprobs``/``loss_mask``, ``resp.output_tokens = ...``), the conversation
lists a loop appends decoded text to, and the ``apply_chat_template`` calls. It judges them when
the function ends, following names through the function's own bindings only.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import ClassVar

import libcst as cst

from areal_lint.context import LintContext
from areal_lint.names import dotted
from areal_lint.rules.base import FamilyVisitor, Hit, Rule, check
from areal_lint.walk import _child_fields, _kind

# Fields that carry the trained token ids, in a trajectory dict or a response object.
IDS_KEYS = {"input_ids", "output_tokens", "output_ids", "completion_ids", "token_ids", "seq",
            "input_tokens", "response_ids", "tokens"}  # fmt: skip
# Calls whose ``input_ids`` is a prompt to generate from, not a trajectory to train on.
GENERATION = ("ModelRequest", "agenerate", "generate", "ainvoke", "create")
TOKENIZERS = ("tokenizer", "tok", "processor", "_tokenizer")
DECODE = {"decode", "batch_decode"}
# ``<name>.text`` is a completion's text when the name says it is an output.
COMPLETION_WORDS = ("output", "completion", "response", "reply")
ZEROS = {"zeros", "full", "empty"}
ONES = {"ones"}


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


def _nodes(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Every node under ``node`` (itself first), without whitespace."""
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        for name in _child_fields(type(current)):
            value = getattr(current, name)
            kind = _kind(type(value))
            if kind == "node":
                stack.append(value)
            elif kind == "sequence":
                stack.extend(v for v in value if _kind(type(v)) == "node")


def _api_completion_text(expr: cst.Attribute) -> bool:
    """The text of a completion returned by an API rather than sampled ids: OpenAI's
    ``c.choices[0].message.content`` and ``c.choices[0].text``, the Responses API's
    ``r.output_text``, Anthropic's ``m.content[0].text``, an inference or scaffolding output's
    ``outputs[0].text`` / ``scaffolding_output.text`` (AReaL's examples/scaffolding)."""
    attr, base = expr.attr.value, expr.value
    if attr == "output_text":
        return True
    if attr == "content" and isinstance(base, cst.Attribute) and base.attr.value == "message":
        return True
    if attr != "text":
        return False
    if isinstance(base, cst.Subscript) and isinstance(base.value, cst.Attribute):
        return base.value.attr.value in ("choices", "content", "outputs")
    name = dotted(base) or ""
    return any(word in name.rsplit(".", 1)[-1] for word in COMPLETION_WORDS)


def _last(func: cst.BaseExpression) -> str:
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return func.value if isinstance(func, cst.Name) else ""


def _is_len(node: cst.CSTNode) -> bool:
    return (
        isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "len"
    )


def _names(expr: cst.CSTNode, skip_len: bool = False) -> Iterator[str]:
    """Names read in ``expr``; with ``skip_len``, not those only measured by ``len(...)``."""
    stack = [expr]
    while stack:
        node = stack.pop()
        if skip_len and _is_len(node):
            continue
        if isinstance(node, cst.Name):
            yield node.value
        if isinstance(node, cst.Attribute | cst.Arg):  # not ``.attr`` nor ``keyword=``
            stack.append(node.value)
            continue
        for name in _child_fields(type(node)):
            value = getattr(node, name)
            kind = _kind(type(value))
            if kind == "node":
                stack.append(value)
            elif kind == "sequence":
                stack.extend(v for v in value if _kind(type(v)) == "node")


def _key(node: cst.BaseExpression | None) -> str | None:
    if isinstance(node, cst.SimpleString):
        value = node.evaluated_value
        return value if isinstance(value, str) else None
    return None


def _number(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.UnaryOperation) and isinstance(node.operator, cst.Minus):
        inner = _number(node.expression)
        return None if inner is None else "-" + inner
    if isinstance(node, cst.Integer | cst.Float):
        return node.value
    if isinstance(node, cst.Name) and node.value in ("True", "False"):
        return node.value
    return None


def _constant_list(node: cst.BaseExpression) -> str | None:
    """``"0.0"`` for ``[0.0]``; None if not a one-constant list."""
    if isinstance(node, cst.List) and len(node.elements) == 1:
        element = node.elements[0]
        if isinstance(element, cst.Element):
            return _number(element.value)
    return None


@dataclass
class _Function:
    """What one function body binds and trains, recorded during the walk."""

    binds: list[tuple[str, cst.BaseExpression, bool]] = field(default_factory=list)
    added: set[str] = field(default_factory=set)  # names grown by +=, append or extend
    sinks: list[tuple[str, cst.BaseExpression, bool]] = field(
        default_factory=list
    )  # key, value, is prompt
    templates: list[cst.Call] = field(default_factory=list)
    loops: int = 0
    relevant: bool = False  # mentions output tokens, a chat template or a trained field


class _Facts:
    """The judgement of one function, computed when it ends."""

    def __init__(self, fn: _Function) -> None:
        self.fn = fn
        self.out: set[str] = set()  # names bound to X.output_tokens
        self.text: set[str] = set()  # names holding the decoded completion
        self.resp = "resp"
        self.ids_origin: dict[str, cst.Call] = {}  # name -> the tokenizing call its ids came from
        self.template_text: dict[str, cst.Call] = {}  # name -> apply_chat_template(tokenize=False)
        self.conversations: set[str] = set()
        self.prompts: set[str] = set()  # names given to the model as a prompt
        self.template_calls: set[int] = set()
        self._learn()

    def mentions_output(self, expr: cst.CSTNode) -> bool:
        for node in _nodes(expr):
            if isinstance(node, cst.Attribute) and node.attr.value == "output_tokens":
                self.resp = dotted(node.value) or self.resp
                return True
            if isinstance(node, cst.Name) and node.value in self.out:
                return True
        return False

    def is_text(self, expr: cst.BaseExpression) -> bool:
        """The decoded completion, a chat API's completion text, or text made from them
        (slices, f-strings, str methods, ``text or ""``)."""
        if isinstance(expr, cst.Name):
            return expr.value in self.text
        if isinstance(expr, cst.Attribute) and _api_completion_text(expr):
            return True
        if isinstance(expr, cst.BooleanOperation):
            return self.is_text(expr.left) or self.is_text(expr.right)
        if isinstance(expr, cst.Call):
            func = expr.func
            if isinstance(func, cst.Attribute) and func.attr.value in DECODE:
                return bool(expr.args) and self.mentions_output(expr.args[0].value)
            return isinstance(func, cst.Attribute) and self.is_text(func.value)
        if isinstance(expr, cst.BinaryOperation):
            return self.is_text(expr.left) or self.is_text(expr.right)
        if isinstance(expr, cst.FormattedString):
            return any(
                isinstance(p, cst.FormattedStringExpression) and self.is_text(p.expression)
                for p in expr.parts
            )
        if isinstance(expr, cst.Subscript):
            return self.is_text(expr.value)
        return False

    def _tokenizing_call(self, expr: cst.BaseExpression) -> cst.Call | None:
        """``tok.encode(text)``, ``tok(text)["input_ids"]``, ``tok(text).input_ids``."""
        if isinstance(expr, cst.Subscript | cst.Attribute) and isinstance(expr.value, cst.Call):
            expr = expr.value
        if not isinstance(expr, cst.Call) or not expr.args:
            return None
        func, first = expr.func, expr.args[0].value
        name = _last(func)
        if name == "encode" or name in TOKENIZERS:
            if self.is_text(first):
                return expr
            if isinstance(first, cst.Name) and first.value in self.template_text:
                return self.template_text[first.value]
        if name == "apply_chat_template" and id(expr) in self.template_calls:
            return expr
        return None

    def ids_from(self, expr: cst.BaseExpression) -> cst.Call | None:
        """The tokenizing call the ids in ``expr`` come from, if re-made from text."""
        return next(self.all_ids_from(expr), None)

    def all_ids_from(self, expr: cst.BaseExpression) -> Iterator[cst.Call]:
        """Every tokenizing call whose ids reach ``expr`` (``prompt + ids + more``)."""
        call = self._tokenizing_call(expr)
        if call is not None:
            yield call
            return
        for node in _nodes(expr):
            if node is not expr and isinstance(node, cst.BaseExpression):
                call = self._tokenizing_call(node)
                if call is not None:
                    yield call
        for name in _names(expr, skip_len=True):
            if name in self.ids_origin:
                yield self.ids_origin[name]

    def _learn(self) -> None:
        fn = self.fn
        plain: dict[str, bool] = {}  # name -> every ``=`` binding is X.output_tokens
        for name, value, _ in fn.binds:
            if name not in fn.added:
                output = isinstance(value, cst.Attribute | cst.Subscript) and self.mentions_output(
                    value
                )
                plain[name] = plain.get(name, True) and output
        self.out = {name for name, output in plain.items() if output}
        for _ in range(2):  # a loop may use a name before the line that binds it
            for name, value, _ in fn.binds:
                if self.is_text(value):
                    self.text.add(name)
        for _ in range(2):  # ``history = prompt + turns`` after ``turns = [...]``
            for name, value, _ in fn.binds:
                if self.holds_completion_text(value):
                    self.conversations.add(name)
        for call in fn.templates:
            if any(
                (a.keyword is None or a.keyword.value == "conversation")
                and self.holds_completion_text(a.value)
                for a in call.args
            ):
                self.template_calls.add(id(call))
        for key, value, is_prompt in fn.sinks:
            if is_prompt and key in IDS_KEYS:
                self.prompts.update(_names(value))
        for _ in range(2):
            for name, value, _ in fn.binds:
                if (
                    isinstance(value, cst.Call)
                    and id(value) in self.template_calls
                    and _tokenize_false(value)
                ):
                    self.template_text[name] = value
                    continue
                origin = self.ids_from(value)
                if origin is not None:
                    self.ids_origin.setdefault(name, origin)

    def holds_completion_text(self, expr: cst.BaseExpression) -> bool:
        """Messages with a completion as text: a conversation a loop or a comprehension
        appended decoded answers to (``messages``), or one written in place (``messages +
        [{"role": "assistant", "content": text}]``)."""
        if any(name in self.conversations for name in _names(expr, skip_len=True)):
            return True
        return any(
            isinstance(node, cst.Dict) and self._has_text_content(node) for node in _nodes(expr)
        )

    def _has_text_content(self, node: cst.Dict) -> bool:
        return any(
            isinstance(e, cst.DictElement) and _key(e.key) == "content" and self.is_text(e.value)
            for e in node.elements
        )

    def retemplated_prompt(self, call: cst.Call) -> bool:
        """The re-templated ids were given to the model: they are the prompt it saw."""
        return any(
            name in self.prompts for name, origin in self.ids_origin.items() if origin is call
        )

    # ---- what the checks look for ----------------------------------------------------------
    def output_length(self, expr: cst.BaseExpression) -> bool:
        if isinstance(expr, cst.Attribute) and expr.attr.value == "output_len":
            self.resp = dotted(expr.value) or self.resp
            return True
        return _is_len(expr) and bool(expr.args) and self.mentions_output(expr.args[0].value)  # type: ignore[attr-defined]

    def placeholders(self, expr: cst.BaseExpression) -> Iterator[cst.CSTNode]:
        for node in _nodes(expr):
            if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Multiply):
                for const, length in ((node.left, node.right), (node.right, node.left)):
                    if _constant_list(const) is not None and self.output_length(length):
                        yield node
            elif isinstance(node, cst.Call) and node.args:
                name = _last(node.func)
                arg = node.args[0].value
                if (name in ZEROS and self.output_length(arg)) or (
                    name == "zeros_like" and self.mentions_output(arg)
                ):
                    yield node
            elif (
                isinstance(node, cst.ListComp)
                and _number(node.elt) is not None
                and self.mentions_output(node.for_in.iter)
            ):
                yield node

    def covers_prompt(self, expr: cst.BaseExpression, trained: set[str]) -> bool:
        """A sequence that holds the prompt: prompt tokens in it, or the trained input_ids."""
        for node in _nodes(expr):
            if isinstance(node, cst.Attribute) and node.attr.value in ("input_tokens", "input_len"):
                self.resp = dotted(node.value) or self.resp
                return True
            if isinstance(node, cst.Name) and node.value in trained:
                return True
        return False

    def full_masks(
        self, expr: cst.BaseExpression, full: set[str], trained: set[str]
    ) -> Iterator[cst.CSTNode]:
        def whole(length: cst.BaseExpression) -> bool:
            if _is_len(length) and length.args:  # type: ignore[attr-defined]
                arg = length.args[0].value  # type: ignore[attr-defined]
                return self.covers_prompt(arg, trained) or any(n in full for n in _names(arg))
            return self.covers_prompt(length, set())

        for node in _nodes(expr):
            if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Multiply):
                for const, length in ((node.left, node.right), (node.right, node.left)):
                    if _constant_list(const) in ("1", "True") and whole(length):
                        yield node
            elif isinstance(node, cst.Call) and node.args:
                name, arg = _last(node.func), node.args[0].value
                if (name in ONES and whole(arg)) or (
                    name == "ones_like"
                    and (self.covers_prompt(arg, trained) or any(n in full for n in _names(arg)))
                ):
                    yield node


def _whole_name(expr: cst.BaseExpression) -> str | None:
    """``seq`` for ``seq``, ``torch.tensor(seq)``, ``np.array(seq[:n])``, ``t(seq).unsqueeze(0)``."""
    while True:
        if isinstance(expr, cst.Name):
            return expr.value
        if isinstance(expr, cst.Subscript):
            expr = expr.value
        elif isinstance(expr, cst.Call):
            func = expr.func
            if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Call):
                expr = func.value  # torch.tensor(seq).unsqueeze(0)
            elif expr.args and expr.args[0].keyword is None:
                expr = expr.args[0].value
            else:
                return None
        else:
            return None


def _tokenize_false(call: cst.Call) -> bool:
    return any(
        a.keyword is not None
        and a.keyword.value == "tokenize"
        and isinstance(a.value, cst.Name)
        and a.value.value == "False"
        for a in call.args
    )


@check("ARL501")
def retokenized_completion(ctx: LintContext, call: cst.Call, facts: _Facts) -> Hit | None:
    if id(call) in facts.template_calls:
        return None  # ARL504's
    return Hit({"name": dotted(call.func) or _last(call.func), "resp": facts.resp})


@check("ARL502")
def placeholder_logprobs(ctx: LintContext, node: cst.CSTNode, facts: _Facts) -> Hit | None:
    return Hit({"resp": facts.resp})


@check("ARL503")
def prompt_in_loss_mask(ctx: LintContext, node: cst.CSTNode, facts: _Facts) -> Hit | None:
    return Hit({"resp": facts.resp})


@check("ARL504")
def retemplated_conversation(ctx: LintContext, call: cst.Call, facts: _Facts) -> Hit | None:
    if id(call) not in facts.template_calls or facts.retemplated_prompt(call):
        return None
    return Hit({"name": dotted(call.func) or _last(call.func), "resp": facts.resp})


class TrajectoriesVisitor(FamilyVisitor):
    """Records each function's bindings and trained fields; judges them when it ends."""

    def __init__(self, ctx: LintContext, reporter) -> None:  # type: ignore[no-untyped-def]
        super().__init__(ctx, reporter)
        self.stack: list[_Function] = []

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.stack.append(_Function())

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self.stack.append(_Function())

    def leave_Lambda(self, original_node: cst.Lambda) -> None:
        self.stack.pop()

    def visit_For(self, node: cst.For) -> None:
        if self.stack:
            self.stack[-1].loops += 1

    def leave_For(self, original_node: cst.For) -> None:
        if self.stack:
            self.stack[-1].loops -= 1

    def visit_While(self, node: cst.While) -> None:
        if self.stack:
            self.stack[-1].loops += 1

    def leave_While(self, original_node: cst.While) -> None:
        if self.stack:
            self.stack[-1].loops -= 1

    def visit_Attribute(self, node: cst.Attribute) -> None:
        if self.stack and node.attr.value in (
            "output_tokens",
            "output_len",
            "input_tokens",
            "input_len",
        ):
            self.stack[-1].relevant = True

    def _bind(
        self, target: cst.BaseExpression, value: cst.BaseExpression, added: bool = False
    ) -> None:
        fn = self.stack[-1]
        if isinstance(target, cst.Name):
            fn.binds.append((target.value, value, fn.loops > 0))
            if added:
                fn.added.add(target.value)
        elif isinstance(target, cst.Attribute):  # resp.output_tokens = ids
            fn.sinks.append((target.attr.value, value, False))
        elif (
            isinstance(target, cst.Tuple | cst.List)
            and isinstance(value, cst.Tuple | cst.List)
            and len(target.elements) == len(value.elements)
        ):
            for t, v in zip(target.elements, value.elements, strict=True):
                self._bind(t.value, v.value)

    def visit_Assign(self, node: cst.Assign) -> None:
        if self.stack:
            for target in node.targets:
                self._bind(target.target, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if self.stack and node.value is not None:
            self._bind(node.target, node.value)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        if self.stack:
            self._bind(node.target, node.value, added=True)

    def visit_Call(self, node: cst.Call) -> None:
        if not self.stack:
            return
        fn = self.stack[-1]
        func = node.func
        name = _last(func)
        if name in ("append", "extend", "insert") and isinstance(func, cst.Attribute) and node.args:
            if isinstance(func.value, cst.Name):
                fn.binds.append((func.value.value, node.args[-1].value, fn.loops > 0))
                fn.added.add(func.value.value)
        elif name == "apply_chat_template":
            fn.templates.append(node)
            fn.relevant = True
        prompt = name in GENERATION
        for arg in node.args:
            if arg.keyword is not None:
                fn.sinks.append((arg.keyword.value, arg.value, prompt))
                if arg.keyword.value == "input_ids" and not prompt:
                    fn.relevant = True

    def visit_CompFor(self, node: cst.CompFor) -> None:
        """``for answer in answers`` binds ``answer`` to an item of ``answers``."""
        if self.stack and isinstance(node.target, cst.Name):
            self.stack[-1].binds.append((node.target.value, node.iter, True))

    def visit_Dict(self, node: cst.Dict) -> None:
        if not self.stack:
            return
        for element in node.elements:
            if isinstance(element, cst.DictElement):
                key = _key(element.key)
                if key is not None:
                    self.stack[-1].sinks.append((key, element.value, False))
                    if key == "input_ids":  # a trajectory is built here, whatever its source
                        self.stack[-1].relevant = True

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        fn = self.stack.pop()
        if fn.relevant:
            self._judge(fn)

    def _judge(self, fn: _Function) -> None:
        facts = _Facts(fn)
        reported: set[int] = set()

        def report(check_fn, node: cst.CSTNode) -> None:  # type: ignore[no-untyped-def]
            if id(node) not in reported:
                reported.add(id(node))
                self.run(check_fn, node, facts)

        trained = {
            name
            for key, value, prompt in fn.sinks
            if key == "input_ids" and not prompt and (name := _whole_name(value)) is not None
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
