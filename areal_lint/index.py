# SPDX-License-Identifier: Apache-2.0
"""A cheap pre-pass over the module: functions, call edges, ``self`` bindings, reachability.

Episode context (E) covers episode methods and the same-file helpers reachable from them:
``self.m()`` on the same class, module functions called by name, and methods of same-file
classes constructed in the episode. Setup functions are never part of it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import libcst as cst

from areal_lint.analysis.async_clients import AWAITED_RESULTS
from areal_lint.names import annotation_name, dotted, imports_of, self_attr
from areal_lint.options import LintOptions
from areal_lint.walk import walk

SETUP_PREFIXES = ("setup", "initialize", "init_class", "lifespan", "main")
SETUP_EXACT = {"__init__", "__aenter__", "__post_init__", "__enter__"}


def is_setup_name(name: str) -> bool:
    bare = name.lstrip("_")
    return name in SETUP_EXACT or bare.startswith(SETUP_PREFIXES)


@dataclass
class FunctionInfo:
    qualname: str  # "func" or "Class.method"
    node: cst.FunctionDef
    cls: str | None
    is_async: bool
    calls: set[str] = field(default_factory=set)
    nested: bool = False
    locals: set[str] = field(default_factory=set)  # names bound in the body (shadow imports)
    nested_defs: set[str] = field(default_factory=set)
    is_generator: bool = False  # has its own ``yield``: calling it gives no coroutine
    param_types: dict[str, str] = field(default_factory=dict)  # parameter -> annotated type

    @property
    def is_setup(self) -> bool:
        decorators = {
            dotted(d.decorator) or dotted(getattr(d.decorator, "func", d.decorator))
            for d in self.node.decorators
        }
        cached = any(
            d and d.split(".")[-1] in ("cache", "lru_cache", "cached_property") for d in decorators
        )
        return cached or is_setup_name(self.node.name.value)


@dataclass
class ModuleIndex:
    functions: dict[str, FunctionInfo] = field(default_factory=dict)
    classes: set[str] = field(default_factory=set)
    # "Class" -> {"attr": "qualified.Constructor"} from assignments in setup methods
    self_bindings: dict[str, dict[str, str]] = field(default_factory=dict)
    # "Class" -> {"attr": "dotted.Type"} from anywhere else: assignments in other methods, an
    # annotated parameter stored on self, ``self.x: T``, class-level ``x: T`` (dataclass fields)
    self_types: dict[str, dict[str, str]] = field(default_factory=dict)
    episode_reachable: set[str] = field(default_factory=set)
    by_node: dict[int, FunctionInfo] = field(default_factory=dict)
    # "Class" -> self attributes passed to AsyncRewardWrapper(...) (a reward-like signal)
    wrapped_reward_args: dict[str, set[str]] = field(default_factory=dict)
    imports: dict[str, str] = field(default_factory=dict)

    def is_async_function(self, qualname: str) -> bool:
        info = self.functions.get(qualname)
        return info is not None and info.is_async

    def is_coroutine_function(self, qualname: str) -> bool:
        """An ``async def`` that is not an async generator: calling it returns a coroutine."""
        info = self.functions.get(qualname)
        return info is not None and info.is_async and not info.is_generator


class _Collector(cst.CSTVisitor):
    def __init__(self, index: ModuleIndex) -> None:
        self.index = index
        self.class_stack: list[str] = []
        self.func_stack: list[FunctionInfo] = []

    def visit_Import(self, node: cst.Import) -> None:
        if not self.func_stack:
            self.index.imports.update(imports_of(node))

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if not self.func_stack:
            self.index.imports.update(imports_of(node))

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.class_stack.append(node.name.value)
        self.index.classes.add(node.name.value)
        if self.func_stack:
            self.func_stack[-1].locals.add(node.name.value)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.class_stack.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        cls = self.class_stack[-1] if self.class_stack and not self.func_stack else None
        name = node.name.value
        qualname = f"{cls}.{name}" if cls else name
        nested = bool(self.func_stack)
        if nested:
            qualname = f"{self.func_stack[-1].qualname}.<locals>.{name}"
        info = FunctionInfo(qualname, node, cls, node.asynchronous is not None, nested=nested)
        if nested:
            self.func_stack[-1].locals.add(name)
            self.func_stack[-1].nested_defs.add(name)
        params = node.params
        for param in [*params.posonly_params, *params.params, *params.kwonly_params]:
            info.locals.add(param.name.value)
            if param.annotation is not None:
                kind = annotation_name(param.annotation.annotation)
                if kind is not None:
                    info.param_types[param.name.value] = kind
        for star in (params.star_arg, params.star_kwarg):
            if isinstance(star, cst.Param):
                info.locals.add(star.name.value)
        self.index.functions.setdefault(qualname, info)
        self.index.by_node[id(node)] = info
        self.func_stack.append(info)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.func_stack.pop()

    def visit_Yield(self, node: cst.Yield) -> None:
        if self.func_stack:
            self.func_stack[-1].is_generator = True

    def visit_Call(self, node: cst.Call) -> None:
        if not self.func_stack:
            return
        current = self.func_stack[-1]
        callee = node.func
        name = dotted(callee)
        if name and name.split(".")[-1] == "AsyncRewardWrapper" and node.args and current.cls:
            attr = self_attr(node.args[0].value)
            if attr is not None:
                self.index.wrapped_reward_args.setdefault(current.cls, set()).add(attr)
        if isinstance(callee, cst.Name):
            current.calls.add(callee.value)
        elif isinstance(callee, cst.Attribute):
            base = callee.value
            if isinstance(base, cst.Name) and base.value in ("self", "cls") and current.cls:
                current.calls.add(f"{current.cls}.{callee.attr.value}")
            elif isinstance(base, cst.Name) and base.value in self.index.classes:
                current.calls.add(f"{base.value}.{callee.attr.value}")
            elif isinstance(base, cst.Call) and isinstance(base.func, cst.Name):
                current.calls.add(f"{base.func.value}.{callee.attr.value}")

    def _bind(self, target: cst.BaseExpression) -> None:
        if not self.func_stack:
            return
        if isinstance(target, cst.Name):
            self.func_stack[-1].locals.add(target.value)
        elif isinstance(target, cst.Tuple | cst.List):
            for element in target.elements:
                self._bind(element.value)

    def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
        self._bind(node.target)

    def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
        self._bind(node.target)
        kind = annotation_name(node.annotation.annotation)
        if kind is None or not self.class_stack:
            return
        if not self.func_stack and isinstance(node.target, cst.Name):  # class-level field
            self.index.self_types.setdefault(self.class_stack[-1], {})[node.target.value] = kind
        elif self.func_stack and self.func_stack[-1].cls and self_attr(node.target) is not None:
            cls = self.func_stack[-1].cls
            self.index.self_types.setdefault(cls, {})[self_attr(node.target)] = kind  # type: ignore[index]

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        self._bind(node.target)

    def visit_For(self, node: cst.For) -> None:
        self._bind(node.target)

    def visit_AsName(self, node: cst.AsName) -> None:
        self._bind(node.name)

    def visit_Assign(self, node: cst.Assign) -> None:
        if not self.func_stack or self.func_stack[-1].cls is None:
            return
        current = self.func_stack[-1]
        value = node.value
        if isinstance(value, cst.Call):
            kind = dotted(value.func)
        elif isinstance(value, cst.Name):  # self.session = session (an annotated parameter)
            kind = current.param_types.get(value.value)
        elif isinstance(value, cst.Await) and isinstance(value.expression, cst.Call):
            # self.http = await workflow_context.get_httpx_client()
            getter = dotted(value.expression.func)
            kind = AWAITED_RESULTS.get(getter.rpartition(".")[2]) if getter else None
        else:
            return
        if kind is None:
            return
        setup = isinstance(value, cst.Call) and current.is_setup
        for target in node.targets:
            attr = self_attr(target.target)
            if attr is None:
                continue
            if setup:
                self.index.self_bindings.setdefault(current.cls, {})[attr] = kind  # type: ignore[arg-type]
            else:
                self.index.self_types.setdefault(current.cls, {}).setdefault(attr, kind)  # type: ignore[arg-type]


def is_episode_root(info: FunctionInfo, options: LintOptions) -> bool:
    name = info.node.name.value
    if info.nested or not info.is_async:
        return False
    if name in options.episode_methods:
        return True
    if name != "run" or info.cls is None:
        return False
    params = info.node.params.params
    first = params[1].name.value if len(params) > 1 else None
    return first == "data"


def build_index(module: cst.Module, options: LintOptions) -> ModuleIndex:
    index = ModuleIndex()
    walk(module, _Collector(index))
    todo = [q for q, info in index.functions.items() if is_episode_root(info, options)]
    seen = set(todo)
    while todo:
        info = index.functions[todo.pop()]
        for callee in info.calls:
            target = index.functions.get(callee)
            if target is None or callee in seen or target.is_setup:
                continue
            seen.add(callee)
            todo.append(callee)
    index.episode_reachable = seen
    return index
