# SPDX-License-Identifier: Apache-2.0
"""The single traversal that tracks scopes and hands each call to every rule family.

Per function it keeps: whether the body is async (context A), whether it is an episode or a
helper reachable from one (context E), whether it is set-up code (context S), its local names
(which shadow imports), its function-local imports, and the constructor each local was bound to
(``client = httpx.Client()``). Lambdas and nested ``def`` reset the context, as the spec says.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import libcst as cst

from areal_lint.index import FunctionInfo, ModuleIndex
from areal_lint.names import BUILTINS, dotted, imports_of, self_attr
from areal_lint.options import LintOptions
from areal_lint.walk import walk

CONSUMERS = {
    "builtins.float", "builtins.int", "builtins.str", "builtins.bool", "builtins.len",
    "builtins.print", "builtins.repr", "json.dumps", "torch.tensor",
}  # fmt: skip
OFFLOADERS = {"asyncio.to_thread", "functools.partial"}
OPTIONAL_TRANSPORT = "<optional http_client>"
SHARED_TRANSPORT = "<shared http_client>"


def transport_kind(expr: cst.BaseExpression) -> str | None:
    """Where an ``http_client`` value comes from: an optional ``.get`` or a shared client."""
    if (
        isinstance(expr, cst.Call)
        and isinstance(expr.func, cst.Attribute)
        and expr.func.attr.value == "get"
    ):
        args = expr.args
        names_client = (
            args
            and isinstance(args[0].value, cst.SimpleString)
            and "http_client" in args[0].value.value
        )
        no_default = len(args) == 1 or (
            len(args) > 1 and isinstance(args[1].value, cst.Name) and args[1].value.value == "None"
        )
        if names_client and no_default:
            return OPTIONAL_TRANSPORT
    if isinstance(expr, cst.Await) and isinstance(expr.expression, cst.Call):
        name = dotted(expr.expression.func) or ""
        if name.endswith(("get_httpx_client", "get_aiohttp_session")):
            return SHARED_TRANSPORT
    if isinstance(expr, cst.Subscript) and "http_client" in cst.Module(body=[]).code_for_node(
        expr.slice[0]
    ):
        return SHARED_TRANSPORT
    return None


@dataclass
class Frame:
    info: FunctionInfo | None
    is_async: bool
    is_episode: bool
    is_setup: bool
    locals: set[str] = field(default_factory=set)
    imports: dict[str, str] = field(default_factory=dict)
    types: dict[str, str] = field(default_factory=dict)
    # coroutine-valued locals: name -> (assigning node, used?)
    coroutines: dict[str, list[Any]] = field(default_factory=dict)
    guards: list[set[str]] = field(default_factory=list)  # self attrs tested by enclosing ifs
    nested_defs: set[str] = field(default_factory=set)
    globals_declared: set[str] = field(default_factory=set)


class LintVisitor(cst.CSTVisitor):
    def __init__(
        self,
        index: ModuleIndex,
        options: LintOptions,
        checks: list[Callable[[LintVisitor, cst.Call], None]],
        report: Callable[..., None],
        on_assign: list[Callable[[LintVisitor, cst.Assign], None]],
        on_name: list[Callable[[LintVisitor, cst.Name], None]],
        on_leave_function: list[Callable[[LintVisitor, Frame], None]],
        on_with: list[Callable[[LintVisitor, cst.With], None]] | None = None,
    ) -> None:
        self.on_with = on_with or []
        self.index = index
        self.options = options
        self.checks = checks
        self.report = report
        self.on_assign = on_assign
        self.on_name = on_name
        self.on_leave_function = on_leave_function
        self.frames: list[Frame] = [Frame(None, False, False, True)]
        self.class_stack: list[str] = []
        self.awaited: set[int] = set()
        self.statement_calls: set[int] = set()  # calls that are a whole expression statement
        self.value_calls: set[int] = set()  # calls whose value is read (ARL203)
        self.value_names: set[int] = set()
        self.assign_target_of: dict[int, cst.BaseExpression] = {}
        self.returned_calls: set[int] = set()  # ``return X(...)``: a factory hands X over
        self.offload_args: set[int] = set()
        self.guarded_calls: set[int] = set()  # calls inside a lazy-init assignment
        self.wrapped_reward_args = index.wrapped_reward_args

    # ---- scope tracking -------------------------------------------------------------------
    @property
    def frame(self) -> Frame:
        return self.frames[-1]

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.class_stack.append(node.name.value)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.class_stack.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        info = self.index.by_node.get(id(node))
        is_async = node.asynchronous is not None
        is_setup = info.is_setup if info else False
        reachable = info is not None and info.qualname in self.index.episode_reachable
        frame = Frame(info, is_async, reachable and not is_setup, is_setup)
        if info is not None:  # bound names come from the index pre-pass (no second walk)
            frame.locals = info.locals
            frame.nested_defs = info.nested_defs
        self.frames.append(frame)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        frame = self.frames.pop()
        for hook in self.on_leave_function:
            hook(self, frame)

    def visit_Lambda(self, node: cst.Lambda) -> None:
        frame = Frame(None, False, False, self.frame.is_setup)
        frame.locals = {p.name.value for p in node.params.params}
        self.frames.append(frame)

    def leave_Lambda(self, original_node: cst.Lambda) -> None:
        self.frames.pop()

    def visit_Import(self, node: cst.Import) -> None:
        if len(self.frames) > 1:
            self.frame.imports.update(imports_of(node))

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if len(self.frames) > 1:
            self.frame.imports.update(imports_of(node))

    def visit_If(self, node: cst.If) -> None:
        self._mark_value(node.test)
        tested = set()

        class _Attrs(cst.CSTVisitor):
            def visit_Attribute(self, attr: cst.Attribute) -> None:
                text = dotted(attr)
                if text:
                    tested.add(text)
                    if text.startswith("self."):
                        tested.add("self.*")  # spec §6.3: any self attribute in the test

            def visit_SimpleString(self, s: cst.SimpleString) -> None:
                tested.add("self." + s.value.strip("'\""))  # hasattr(self, "x"), "x" in self.d

            def visit_Name(self, name: cst.Name) -> None:
                tested.add(name.value)

        walk(node.test, _Attrs())
        self.frame.guards.append(tested)

    def leave_If(self, original_node: cst.If) -> None:
        self.frame.guards.pop()

    # ---- expression context ---------------------------------------------------------------
    def visit_Await(self, node: cst.Await) -> None:
        self.awaited.add(id(node.expression))

    def visit_Expr(self, node: cst.Expr) -> None:
        if isinstance(node.value, cst.Call):
            self.statement_calls.add(id(node.value))

    def visit_With(self, node: cst.With) -> None:
        for hook in self.on_with:
            hook(self, node)

    def visit_Global(self, node: cst.Global) -> None:
        self.frame.globals_declared |= {n.name.value for n in node.names}

    def _mark_value(self, expr: cst.BaseExpression | None) -> None:
        if isinstance(expr, cst.Call):
            self.value_calls.add(id(expr))
        elif isinstance(expr, cst.Name):
            self.value_names.add(id(expr))

    def visit_Attribute(self, node: cst.Attribute) -> None:
        self._mark_value(node.value)

    def visit_Subscript(self, node: cst.Subscript) -> None:
        self._mark_value(node.value)

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        self._mark_value(node.left)
        self._mark_value(node.right)

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        self._mark_value(node.left)
        self._mark_value(node.right)

    def visit_UnaryOperation(self, node: cst.UnaryOperation) -> None:
        self._mark_value(node.expression)

    def visit_Comparison(self, node: cst.Comparison) -> None:
        self._mark_value(node.left)
        for target in node.comparisons:
            self._mark_value(target.comparator)

    def visit_FormattedStringExpression(self, node: cst.FormattedStringExpression) -> None:
        self._mark_value(node.expression)

    def visit_Assert(self, node: cst.Assert) -> None:
        self._mark_value(node.test)

    def visit_While(self, node: cst.While) -> None:
        self._mark_value(node.test)

    def visit_IfExp(self, node: cst.IfExp) -> None:
        self._mark_value(node.test)

    def visit_Call(self, node: cst.Call) -> None:
        qualname = self.resolve(node.func)
        text = dotted(node.func) or ""
        if qualname in CONSUMERS or text.split(".")[0] in ("logger", "logging", "log"):
            for arg in node.args:
                self._mark_value(arg.value)
        if (
            qualname in OFFLOADERS
            or (isinstance(node.func, cst.Attribute) and node.func.attr.value == "run_in_executor")
            or (qualname and qualname.endswith(("partial", "AsyncRewardWrapper")))
        ):
            self.offload_args.update(id(arg.value) for arg in node.args)
        for check in self.checks:
            check(self, node)

    def visit_Name(self, node: cst.Name) -> None:
        for hook in self.on_name:
            hook(self, node)

    def visit_Return(self, node: cst.Return) -> None:
        if isinstance(node.value, cst.Call):
            self.returned_calls.add(id(node.value))

    def visit_Assign(self, node: cst.Assign) -> None:
        if isinstance(node.value, cst.Call) and len(node.targets) == 1:
            target = node.targets[0].target
            self.assign_target_of[id(node.value)] = target
            if self._lazy_init_target(target):
                calls = self.guarded_calls

                class _Calls(cst.CSTVisitor):
                    def visit_Call(self, call: cst.Call) -> None:
                        calls.add(id(call))

                walk(node.value, _Calls())
        if (
            len(self.frames) > 1
            and len(node.targets) == 1
            and isinstance(node.targets[0].target, cst.Name)
        ):
            name = node.targets[0].target.value
            kind = transport_kind(node.value)
            if kind is not None:
                self.frame.types[name] = kind
            elif isinstance(node.value, cst.Call) and (
                constructor := self.resolve(node.value.func)
            ):
                self.frame.types[name] = constructor
        for hook in self.on_assign:
            hook(self, node)

    # ---- helpers for rules ----------------------------------------------------------------
    def resolve(self, expr: cst.BaseExpression) -> str | None:
        """The dotted path an expression names, through imports; None if shadowed/unknown."""
        name = dotted(expr)
        if name is None:
            return None
        root, _, rest = name.partition(".")
        for frame in reversed(self.frames[1:]):
            if root in frame.imports:
                base = frame.imports[root]
                return f"{base}.{rest}" if rest else base
            if root in frame.locals:
                return None
        if root in self.index.imports:
            base = self.index.imports[root]
            return f"{base}.{rest}" if rest else base
        if root in BUILTINS and not rest and root not in self.index.functions:
            return f"builtins.{root}"
        if root in self.index.classes or root in self.index.functions:
            return name
        return None

    def resolve_constructor(self, raw: str) -> str:
        root, _, rest = raw.partition(".")
        base = self.index.imports.get(root, root)
        return f"{base}.{rest}" if rest else base

    def receiver_type(self, expr: cst.BaseExpression) -> str | None:
        """The constructor a local or ``self.attr`` was bound to, if known."""
        if isinstance(expr, cst.Name):
            for frame in reversed(self.frames[1:]):
                if expr.value in frame.types:
                    return frame.types[expr.value]
            return None
        if self_attr(expr) is not None and self.class_stack:
            raw = self.index.self_bindings.get(self.class_stack[-1], {}).get(self_attr(expr))
            return self.resolve_constructor(raw) if raw else None
        if isinstance(expr, cst.Call):
            return self.resolve(expr.func)
        return None

    def is_awaited(self, node: cst.CSTNode) -> bool:
        return id(node) in self.awaited

    def current_class(self) -> str | None:
        return self.class_stack[-1] if self.class_stack else None

    def nested_functions(self) -> set[str]:
        return self.frame.nested_defs

    def is_offload_argument(self, node: cst.CSTNode) -> bool:
        return id(node) in self.offload_args

    def guarded(self, key: str) -> bool:
        """Whether an enclosing ``if`` tests ``key`` (``self.x``, ``obj.attr`` or a name)."""
        return any(key in tested for tested in self.frame.guards)

    def _lazy_init_target(self, target: cst.BaseExpression) -> bool:
        """An attribute, or a declared global, assigned under an ``if`` that tests it."""
        if isinstance(target, cst.Subscript):
            return True  # cached into a container keyed per session
        if isinstance(target, cst.Attribute):
            text = dotted(target) or ""
            return self.guarded(text) or (text.startswith("self.") and self.guarded("self.*"))
        if isinstance(target, cst.Name):
            return target.value in self.frame.globals_declared and self.guarded(target.value)
        return False
