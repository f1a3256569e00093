# SPDX-License-Identifier: Apache-2.0
"""The scope and expression facts that several rule families read, kept once per walk.

Per function it keeps: whether the body is async (any async body can block the loop), whether
it is an episode or a helper reachable from one (per-episode construction matters only there),
whether it is set-up code (run once, so exempt from the per-episode rules), its local names
(which shadow imports), its function-local imports, the constructor each local was bound to
(``client = httpx.Client()``) and the tests of the enclosing ``if`` blocks (lazy-init guards).
A lambda or a nested ``def`` starts a fresh context: its body runs later, when and where it is
called, not as part of the enclosing body.

Per expression it records what several families need to know about a node before they see it:
whether it is awaited, a whole statement, read as a value, the value of an assignment, or handed
to a function that runs it elsewhere (a thread, a process pool, ``functools.partial``).

It is the first visitor of the walk, so these facts are up to date when a family sees a node.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from areal_lint.analysis.async_clients import AWAITED_RESULTS, result_type
from areal_lint.index import FunctionInfo, ModuleIndex
from areal_lint.names import BUILTINS, annotation_name, dotted, imports_of, last, self_attr
from areal_lint.options import LintOptions
from areal_lint.walk import Walker

# Calls that read their arguments' values: a coroutine passed to them is used as a value.
CONSUMERS = {
    "builtins.float", "builtins.int", "builtins.str", "builtins.bool", "builtins.len",
    "builtins.print", "builtins.repr", "json.dumps", "json.loads", "torch.tensor", "torch.as_tensor",
    "torch.Tensor", "numpy.array", "numpy.asarray", "builtins.round", "builtins.abs",
    "builtins.sum", "builtins.max", "builtins.min", "math.isnan", "math.isfinite",
}  # fmt: skip
# Calls that take a function (and its arguments) to run it elsewhere or later.
OFFLOADERS = {"asyncio.to_thread", "functools.partial"}
# What a method returns, by the receiver's type: ``conn.cursor()`` is a cursor.
DERIVED = {
    ("sqlite3.connect", "cursor"): "sqlite3.Cursor",
    ("sqlite3.connect", "execute"): "sqlite3.Cursor",
    ("sqlite3.Connection", "cursor"): "sqlite3.Cursor",
    ("sqlite3.Connection", "execute"): "sqlite3.Cursor",
    ("concurrent.futures.ThreadPoolExecutor", "submit"): "concurrent.futures.Future",
    ("concurrent.futures.ProcessPoolExecutor", "submit"): "concurrent.futures.Future",
    ("langgraph.graph.StateGraph", "compile"): "langgraph.graph.state.CompiledStateGraph",
}
# A file opened off the loop is still read on it: ``f = await asyncio.to_thread(open, p)``.
OFFLOADED_FILE = "io.TextIOWrapper"
_OPENERS = {"builtins.open", "io.open", "codecs.open"}


@dataclass
class Frame:
    """One function (or lambda) body being walked."""

    info: FunctionInfo | None
    is_async: bool
    is_episode: bool
    is_setup: bool
    locals: set[str] = field(default_factory=set)
    imports: dict[str, str] = field(default_factory=dict)
    types: dict[str, str] = field(default_factory=dict)  # local -> constructor it was bound to
    declared: dict[str, str] = field(default_factory=dict)  # local -> its annotated type
    # local -> the call that made its value in this body (``f = open(p)``: builtins.open;
    # ``cur = conn.cursor()`` inherits conn's): a finding at that call covers the value's uses
    made_by: dict[str, str] = field(default_factory=dict)
    guards: list[set[str]] = field(default_factory=list)  # what enclosing ``if`` tests read
    nested_defs: set[str] = field(default_factory=set)
    globals_declared: set[str] = field(default_factory=set)


class _TestedNames:
    """Collects what an ``if`` test reads: attributes, names, and string keys of ``self``."""

    def __init__(self) -> None:
        self.tested: set[str] = set()

    def visit_Attribute(self, attr: cst.Attribute) -> None:
        text = dotted(attr)
        if text:
            self.tested.add(text)
            if text.startswith("self."):
                # A lazy-init guard may test any attribute of self (``if self.x is None``,
                # ``isinstance(self.reward_fn, str)``) before building another one.
                self.tested.add("self.*")

    def visit_SimpleString(self, s: cst.SimpleString) -> None:
        self.tested.add("self." + s.value.strip("'\""))  # hasattr(self, "x"), "x" in self.d

    def visit_Name(self, name: cst.Name) -> None:
        self.tested.add(name.value)


class LintContext:
    """Scope tracking and name resolution shared by every rule family during one walk."""

    def __init__(self, index: ModuleIndex, options: LintOptions) -> None:
        self.index = index
        self.options = options
        self.frames: list[Frame] = [Frame(None, False, False, True)]
        self.class_stack: list[str] = []
        self.awaited: set[int] = set()
        self.async_used: set[int] = set()  # items of ``async with``, iterables of ``async for``
        self.statement_calls: set[int] = set()  # calls that are a whole expression statement
        self.value_calls: set[int] = set()  # calls whose value is read
        self.value_names: set[int] = set()  # names whose value is read
        self.assign_target_of: dict[int, cst.BaseExpression] = {}  # call -> its single target
        self.offload_args: set[int] = set()  # arguments of an offloader: run elsewhere
        self._qualname_of: tuple[int, str | None] = (0, None)
        self._tested_names = _TestedNames()
        self._test_walker = Walker(self._tested_names)  # reused: one hook table per file

    # ---- scopes -------------------------------------------------------------------------
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
        if info is not None:
            for param, raw in info.param_types.items():  # client: httpx.Client
                kind = self.resolve_dotted(raw)
                if kind is not None:
                    frame.types[param] = kind
                    frame.declared[param] = kind

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.frames.pop()

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

    def visit_Global(self, node: cst.Global) -> None:
        self.frame.globals_declared |= {n.name.value for n in node.names}

    def visit_If(self, node: cst.If) -> None:
        self._mark_value(node.test)
        tested: set[str] = set()
        self._tested_names.tested = tested
        self._test_walker.walk(node.test)
        self.frame.guards.append(tested)

    def leave_If(self, original_node: cst.If) -> None:
        self.frame.guards.pop()

    def _binds_types(self) -> bool:
        """Function bodies and the module's top level (its globals); not class bodies."""
        return len(self.frames) > 1 or not self.class_stack

    def visit_Assign(self, node: cst.Assign) -> None:
        if isinstance(node.value, cst.Call) and len(node.targets) == 1:
            self.assign_target_of[id(node.value)] = node.targets[0].target
        if self._binds_types() and len(node.targets) == 1:
            target = node.targets[0].target
            if isinstance(target, cst.Name):
                self._bind_type(target.value, self._value_type(node.value))
                self._bind_maker(target.value, node.value)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        if self._binds_types() and isinstance(node.target, cst.Name):
            raw = annotation_name(node.annotation.annotation)
            kind = self.resolve_dotted(raw) if raw else None
            name = node.target.value
            if kind:  # a declaration holds for later plain assignments, as for a type checker
                self.frame.declared[name] = kind
            else:
                self.frame.declared.pop(name, None)
            self._bind_type(name, kind or self._value_type(node.value))
            self._bind_maker(name, node.value)

    def leave_With(self, original_node: cst.With) -> None:
        """A file bound by ``with open(...) as f`` is closed after the block: no I/O is left."""
        for item in original_node.items:
            name = item.asname.name if item.asname is not None else None
            if isinstance(name, cst.Name) and self._binds_types():
                self.frame.types.pop(name.value, None)
                self.frame.made_by.pop(name.value, None)

    def visit_WithItem(self, node: cst.WithItem) -> None:
        if self._binds_types() and node.asname is not None:
            name = node.asname.name
            if isinstance(name, cst.Name):
                kind = None
                if id(node.item) in self.async_used and isinstance(node.item, cst.Call):
                    kind = self.awaited_type(node.item)  # async with session.post(u) as resp
                self._bind_type(name.value, kind or self._value_type(node.item))
                self._bind_maker(name.value, node.item)

    def _bind_type(self, name: str, kind: str | None) -> None:
        kind = kind or self.frame.declared.get(name)
        if kind:
            self.frame.types[name] = kind
        else:
            self.frame.types.pop(name, None)  # rebound to something else

    def _bind_maker(self, name: str, value: cst.BaseExpression | None) -> None:
        maker = self.made_by(value) if value is not None else None
        if maker:
            self.frame.made_by[name] = maker
        else:
            self.frame.made_by.pop(name, None)

    def _value_type(self, value: cst.BaseExpression | None) -> str | None:
        """The type a bound value has: a constructor, an alias, an offloaded ``open``."""
        if isinstance(value, cst.Await) and isinstance(value.expression, cst.Call):
            call = value.expression
            if (
                self.resolve(call.func) == "asyncio.to_thread"
                and call.args
                and self.resolve(call.args[0].value) in _OPENERS
            ):
                return OFFLOADED_FILE
            return self.awaited_type(call)
        if isinstance(value, cst.Call | cst.Name) or self_attr(value) is not None:
            return self.receiver_type(value)  # type: ignore[arg-type]
        return None

    # ---- expression context -------------------------------------------------------------
    def visit_Await(self, node: cst.Await) -> None:
        self.awaited.add(id(node.expression))

    def visit_With(self, node: cst.With) -> None:
        if node.asynchronous is not None:  # async with x.stream(...): x is an async object
            self.async_used.update(id(item.item) for item in node.items)

    def visit_For(self, node: cst.For) -> None:
        if node.asynchronous is not None:  # async for chunk in x.aiter_bytes()
            self.async_used.add(id(node.iter))

    def visit_Expr(self, node: cst.Expr) -> None:
        if isinstance(node.value, cst.Call):
            self.statement_calls.add(id(node.value))

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
        qualname = self.qualname(node)
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

    # ---- questions the families ask -------------------------------------------------------
    def qualname(self, call: cst.Call) -> str | None:
        """``resolve(call.func)``, computed once per call although every family asks."""
        key, qualname = self._qualname_of
        if key != id(call):
            qualname = self.resolve(call.func)
            self._qualname_of = (id(call), qualname)
        return qualname

    def resolve(self, expr: cst.BaseExpression) -> str | None:
        """The dotted path an expression names, through imports; None if shadowed/unknown."""
        name = dotted(expr)
        return None if name is None else self.resolve_dotted(name)

    def resolve_dotted(self, name: str) -> str | None:
        """``resolve`` for a dotted name given as text (an annotation, a recorded binding)."""
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
        if root not in self.index.imports and root in BUILTINS and not rest:
            return f"builtins.{root}"
        base = self.index.imports.get(root, root)
        return f"{base}.{rest}" if rest else base

    def receiver_type(self, expr: cst.BaseExpression) -> str | None:
        """The constructor a local or ``self.attr`` was bound to, if known."""
        if isinstance(expr, cst.Name):
            for frame in reversed(self.frames[1:]):
                if expr.value in frame.types:
                    return frame.types[expr.value]
                if expr.value in frame.locals and expr.value not in frame.globals_declared:
                    return None  # a local of unknown type shadows a typed global
            return self.frames[0].types.get(expr.value)  # a module-level global
        attr = self_attr(expr)
        if attr is not None and self.class_stack:
            cls = self.class_stack[-1]
            raw = self.index.self_bindings.get(cls, {}).get(attr) or self.index.self_types.get(
                cls, {}
            ).get(attr)
            return self.resolve_constructor(raw) if raw else None
        if isinstance(expr, cst.Call):
            kind = self.resolve(expr.func)
            if kind is None and isinstance(expr.func, cst.Attribute):
                base = self.receiver_type(expr.func.value)
                kind = DERIVED.get((base, expr.func.attr.value)) if base else None
            return kind
        return None

    def awaited_type(self, call: cst.Call) -> str | None:
        """What awaiting ``call`` gives, when the async-client table says: the shared client
        of ``workflow_context.get_httpx_client()``, the response of ``session.post(url)``."""
        func = call.func
        if isinstance(func, cst.Attribute) and isinstance(func.value, cst.Name | cst.Attribute):
            kind = result_type(self.receiver_type(func.value), func.attr.value)
            if kind is not None:
                return kind
        getter = last(self.qualname(call))
        return AWAITED_RESULTS.get(getter) if getter else None

    def made_by(self, expr: cst.BaseExpression) -> str | None:
        """The call that made this value in the current body: ``open(p)`` and ``f`` after ``f =
        open(p)`` or ``with open(p) as f`` give ``builtins.open``; a method's result inherits
        its receiver's (``cur = conn.cursor()``). None for a parameter, an attribute, a global,
        or a value a nested function did not make itself.

        Rules that report the making call use it to stay silent on the uses: one defect, one
        finding, where the fix goes.
        """
        if isinstance(expr, cst.Name):
            return self.frame.made_by.get(expr.value)
        if not isinstance(expr, cst.Call):
            return None
        func = expr.func
        while isinstance(func, cst.Call | cst.Attribute):
            if isinstance(func, cst.Call):
                made = self.resolve(func.func)
                if made:
                    return made
                func = func.func
            else:
                if isinstance(func.value, cst.Name) and func.value.value in self.frame.made_by:
                    return self.frame.made_by[func.value.value]
                func = func.value
        return self.resolve(expr.func)

    def is_awaited(self, node: cst.CSTNode) -> bool:
        return id(node) in self.awaited

    def is_used_asynchronously(self, node: cst.CSTNode) -> bool:
        """Awaited, entered by ``async with`` or iterated by ``async for``."""
        return id(node) in self.awaited or id(node) in self.async_used

    def is_statement(self, call: cst.Call) -> bool:
        return id(call) in self.statement_calls

    def is_value(self, node: cst.CSTNode) -> bool:
        """Whether the node's value is read (an operand, a test, a consumer's argument)."""
        return id(node) in self.value_calls or id(node) in self.value_names

    def is_discarded(self, call: cst.Call) -> bool:
        """``_ = call(...)``: the result is thrown away on purpose."""
        target = self.assign_target_of.get(id(call))
        return isinstance(target, cst.Name) and target.value == "_"

    def is_offload_argument(self, node: cst.CSTNode) -> bool:
        return id(node) in self.offload_args

    def current_class(self) -> str | None:
        return self.class_stack[-1] if self.class_stack else None

    def nested_functions(self) -> set[str]:
        return self.frame.nested_defs

    def guarded(self, key: str) -> bool:
        """Whether an enclosing ``if`` tests ``key`` (``self.x``, ``obj.attr`` or a name)."""
        return any(key in tested for tested in self.frame.guards)
