# SPDX-License-Identifier: Apache-2.0
"""What one function binds and trains, and where its token ids come from: the facts ARL5xx judge.

``TrajectoryRecorder`` records, per function, what names are bound to (in order, with ``+=``,
``.append``/``.extend`` and comprehension targets counted as bindings), where values reach a
trained field (a dict key or keyword ``input_ids``/``logprobs``/``loss_mask``,
``resp.output_tokens = ...``), and the ``apply_chat_template`` calls. ``TrajectoryFacts`` then
follows names through the function's own bindings only: which hold the decoded completion (or a
chat API's completion text), which hold conversations with completions as text, which ids were
re-made from text and by which call, and which ids were given to the model as a prompt.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

import libcst as cst

from areal_lint.names import dotted
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


def descendants(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
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


def last_name(func: cst.BaseExpression) -> str:
    if isinstance(func, cst.Attribute):
        return func.attr.value
    return func.value if isinstance(func, cst.Name) else ""


def _is_len(node: cst.CSTNode) -> bool:
    return (
        isinstance(node, cst.Call) and isinstance(node.func, cst.Name) and node.func.value == "len"
    )


def names_read(expr: cst.CSTNode, skip_len: bool = False) -> Iterator[str]:
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
class FunctionRecord:
    """What one function body binds and trains, recorded during the walk."""

    binds: list[tuple[str, cst.BaseExpression, bool]] = field(default_factory=list)
    added: set[str] = field(default_factory=set)  # names grown by +=, append or extend
    sinks: list[tuple[str, cst.BaseExpression, bool]] = field(
        default_factory=list
    )  # key, value, is prompt
    templates: list[cst.Call] = field(default_factory=list)
    loops: int = 0
    relevant: bool = False  # mentions output tokens, a chat template or a trained field


class TrajectoryFacts:
    """The judgement of one function, computed when it ends."""

    def __init__(self, fn: FunctionRecord) -> None:
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
        for node in descendants(expr):
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
        name = last_name(func)
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
        for node in descendants(expr):
            if node is not expr and isinstance(node, cst.BaseExpression):
                call = self._tokenizing_call(node)
                if call is not None:
                    yield call
        for name in names_read(expr, skip_len=True):
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
                self.prompts.update(names_read(value))
        for _ in range(2):
            for name, value, _ in fn.binds:
                if (
                    isinstance(value, cst.Call)
                    and id(value) in self.template_calls
                    and tokenize_false(value)
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
        if any(name in self.conversations for name in names_read(expr, skip_len=True)):
            return True
        return any(
            isinstance(node, cst.Dict) and self._has_text_content(node)
            for node in descendants(expr)
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
        for node in descendants(expr):
            if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Multiply):
                for const, length in ((node.left, node.right), (node.right, node.left)):
                    if _constant_list(const) is not None and self.output_length(length):
                        yield node
            elif isinstance(node, cst.Call) and node.args:
                name = last_name(node.func)
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
        for node in descendants(expr):
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
                return self.covers_prompt(arg, trained) or any(n in full for n in names_read(arg))
            return self.covers_prompt(length, set())

        for node in descendants(expr):
            if isinstance(node, cst.BinaryOperation) and isinstance(node.operator, cst.Multiply):
                for const, length in ((node.left, node.right), (node.right, node.left)):
                    if _constant_list(const) in ("1", "True") and whole(length):
                        yield node
            elif isinstance(node, cst.Call) and node.args:
                name, arg = last_name(node.func), node.args[0].value
                if (name in ONES and whole(arg)) or (
                    name == "ones_like"
                    and (
                        self.covers_prompt(arg, trained) or any(n in full for n in names_read(arg))
                    )
                ):
                    yield node


def whole_name(expr: cst.BaseExpression) -> str | None:
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


def tokenize_false(call: cst.Call) -> bool:
    return any(
        a.keyword is not None
        and a.keyword.value == "tokenize"
        and isinstance(a.value, cst.Name)
        and a.value.value == "False"
        for a in call.args
    )


class TrajectoryRecorder:
    """Records each function's bindings and trained fields during the walk, and hands the
    record of a function that builds a trajectory to ``judge`` when the function ends."""

    def __init__(self) -> None:
        self.stack: list[FunctionRecord] = []

    def judge(self, fn: FunctionRecord) -> None:
        raise NotImplementedError

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.stack.append(FunctionRecord())

    def visit_Lambda(self, node: cst.Lambda) -> None:
        self.stack.append(FunctionRecord())

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
        name = last_name(func)
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
            self.judge(fn)
