# SPDX-License-Identifier: Apache-2.0
"""Turn a ``WorkflowLike`` into something with ``arun_episode`` (AReaL's ``_resolve_workflow``).

Accepted: a ``RolloutWorkflow`` instance; a ``RolloutWorkflow`` class plus kwargs; an import
string (``pkg.mod.Class``, ``pkg.mod:Class`` or ``path/to/file.py:Class``); or an agent, i.e. any
object with ``async def run(self, data, **extra_kwargs)``, which runs through the proxy.
"""

from __future__ import annotations

import importlib.util
import inspect
import logging
import sys
from pathlib import Path
from typing import Any

from areal_runtime.api.workflow_api import RolloutWorkflow
from areal_runtime.utils.dynamic_import import import_from_string

logger = logging.getLogger("areal_runtime.executor")


def load_object(spec: str) -> Any:
    """Import ``pkg.mod.Name``, ``pkg.mod:Name`` or ``path/to/file.py:Name``."""
    path_part, sep, name = spec.rpartition(":")
    if sep and path_part.endswith(".py"):
        path = Path(path_part)
        if not path.is_file():
            raise FileNotFoundError(f"workflow file {path} does not exist")
        module_name = f"_areal_workflow_{path.stem}"
        module_spec = importlib.util.spec_from_file_location(module_name, path)
        assert module_spec is not None and module_spec.loader is not None
        module = importlib.util.module_from_spec(module_spec)
        sys.modules[module_name] = module
        try:
            module_spec.loader.exec_module(module)
        except SyntaxError as exc:  # the user's file: where it is broken, not our traceback
            sys.modules.pop(module_name, None)
            raise ImportError(f"{path}:{exc.lineno}: {exc.msg}") from None
        if not hasattr(module, name):
            raise ImportError(f"{path} defines no {name!r}")
        return getattr(module, name)
    try:
        if not sep:
            return import_from_string(spec)
        # ``pkg.mod:Name`` (entry-point style); AReaL's import_from_string takes dots only.
        obj = import_from_string(f"{path_part}.{name.split('.')[0]}")
        for part in name.split(".")[1:]:
            obj = getattr(obj, part)
        return obj
    except AttributeError as exc:
        # A name missing from an importable module is a bad spec, reported like one.
        raise ImportError(f"cannot load {spec!r}: {exc}") from exc


def is_agent(obj: Any) -> bool:
    """An agent workflow: not a RolloutWorkflow, with a coroutine ``run`` method."""
    if isinstance(obj, RolloutWorkflow) or (
        inspect.isclass(obj) and issubclass(obj, RolloutWorkflow)
    ):
        return False
    return inspect.iscoroutinefunction(getattr(obj, "run", None))


def requires_proxy(workflow: Any) -> bool:
    """Whether ``workflow`` runs through the proxy: anything but a RolloutWorkflow (instance,
    class, or an import string naming one). AReaL's rule, so a string that does not import is
    taken for an agent too (its error comes when the workflow is resolved)."""
    if workflow is None:
        return False
    if isinstance(workflow, str):
        try:
            workflow = load_object(workflow)
        except (ValueError, ImportError, AttributeError, FileNotFoundError):
            return True
    return not (
        isinstance(workflow, RolloutWorkflow)
        or (inspect.isclass(workflow) and issubclass(workflow, RolloutWorkflow))
    )


def resolve_workflow(
    workflow: Any, workflow_kwargs: dict[str, Any] | None = None, *, make_agent_workflow: Any = None
) -> Any:
    """An object whose ``arun_episode(engine, data)`` runs one episode.

    ``make_agent_workflow(agent)`` wraps agents (the executor passes the proxy workflow).
    """
    if isinstance(workflow, str):
        workflow = load_object(workflow)
    if inspect.isclass(workflow):
        try:
            workflow = workflow(**(workflow_kwargs or {}))
        except TypeError as exc:
            raise TypeError(
                f"cannot construct {workflow.__name__}({', '.join(workflow_kwargs or {})}): "
                f"{exc}; pass the constructor arguments as workflow_kwargs"
            ) from exc
    elif workflow_kwargs:
        logger.warning("workflow_kwargs are ignored: the workflow is already an instance")
    if is_agent(workflow):
        if make_agent_workflow is None:
            raise ValueError(
                f"{type(workflow).__name__} is an agent workflow (async run); it needs the "
                "OpenAI-compatible proxy, which this executor was not given"
            )
        return make_agent_workflow(workflow)
    if not inspect.iscoroutinefunction(getattr(workflow, "arun_episode", None)):
        raise TypeError(
            f"{workflow!r} is not a workflow: give a RolloutWorkflow (async arun_episode) or "
            "an agent (async def run(self, data, **extra_kwargs))"
        )
    return workflow
