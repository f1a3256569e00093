# SPDX-License-Identifier: Apache-2.0
"""docs/cluster.md, followed in a fresh folder and then in real AReaL.

The page's ```LANG file=PATH blocks are written, with the reward and rows of docs/own_project.md
the page builds on; its ```sh run=here blocks run line by line with bash (scaffold, the
rename, areal-lint), except the laptop run of the training script, which runs on the runtime in
this process. Then the renamed
script runs in real AReaL: its ``main`` with the page's ``run=areal`` command line, AReaL's
``load_expr_config``, tokenizer loader and ``get_custom_dataset``; only ``PPOTrainer`` is
replaced, by what AReaL's rollout does without GPUs: AReaL's own workflow resolution
(``RemoteInfEngine._resolve_workflow``, which wraps a group of ``gconfig.n_samples``) and its
``WorkflowExecutor`` (trajectory format check on), driving the embedded model saved as a
Hugging Face folder (``actor.path``) where the cluster has SGLang. Every ``python3 train.py``
line of the page loads with AReaL's ``load_expr_config``, and every config key and ``areal``
module the page names exists in AReaL.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import json
import logging
import os
import re
import shlex
import subprocess
import sys
import types
import typing
from dataclasses import fields
from pathlib import Path
from typing import Any, ClassVar

import pytest
from areal.api.alloc_mode import ModelAllocation
from areal.api.cli_args import GRPOConfig, load_expr_config
from areal.api.workflow_api import RolloutWorkflow
from areal.infra.remote_inf_engine import RemoteInfEngine
from areal.infra.workflow_executor import WorkflowExecutor, check_trajectory_format
from areal.utils.data import concat_padded_tensors

from .areal_release import renamed

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "cluster.md"
OWN_PROJECT = ROOT / "docs" / "own_project.md"
# What the page takes from docs/own_project.md.
FROM_OWN_PROJECT = ("myproj/rewards.py", "data/word_problems.jsonl")
BLOCK = re.compile(r"^```(\w+)([^\n]*)\n(.*?)^```", re.M | re.S)
WORKFLOW = "myproj.word_problems.WordProblemsWorkflow"


def files_of(text: str) -> dict[str, str]:
    return {
        m.group(1): body
        for _, info, body in BLOCK.findall(text)
        if (m := re.search(r"\bfile=(\S+)", info))
    }


def sh_lines(text: str, run: str | None = None) -> list[str]:
    """Command lines of the ```sh blocks (only those marked ``run=RUN`` when given)."""
    lines = []
    for lang, info, body in BLOCK.findall(text):
        if lang != "sh" or (run is not None and f"run={run}" not in info.split()):
            continue
        body = body.replace("\\\n", " ")
        lines += [line for line in body.splitlines() if line.strip() and not line.startswith("#")]
    return lines


def cluster_command_lines(text: str) -> list[list[str]]:
    """The arguments after ``train.py`` of every ``python3 train.py`` line."""
    return [shlex.split(line)[2:] for line in sh_lines(text) if line.startswith("python3 train.py")]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The page followed up to the launch: files written, ``run=here`` commands run."""
    root = tmp_path_factory.mktemp("cluster-page")
    own = files_of(OWN_PROJECT.read_text())
    files = {**{path: own[path] for path in FROM_OWN_PROJECT}, **files_of(PAGE.read_text())}
    for path, content in files.items():
        (root / path).parent.mkdir(parents=True, exist_ok=True)
        (root / path).write_text(content)
    env = {
        **os.environ,
        "PATH": str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""),
        "PYTHONPATH": str(ROOT),
        "OMP_NUM_THREADS": "1",
        "TOKENIZERS_PARALLELISM": "false",
    }
    for line in sh_lines(PAGE.read_text(), run="here"):
        if line.startswith("python train.py"):  # the laptop run, on the runtime
            warnings = run_on_the_runtime(root, shlex.split(line)[2:])
            assert any("ignored on one machine" in w for w in warnings), warnings
            continue
        proc = subprocess.run(
            ["bash", "-c", line], cwd=root, env=env, capture_output=True, text=True, timeout=300
        )
        assert proc.returncode == 0, f"$ {line}\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    return root


def run_on_the_runtime(root: Path, args: list[str]) -> list[str]:
    """``python train.py ARGS`` in ``root``, in this process (which has torch imported
    already: a subprocess would spend longer importing than training); its config warnings."""
    from areal_runtime.api import config_loading

    records: list[logging.LogRecord] = []
    handler = logging.Handler()
    handler.emit = records.append  # type: ignore[method-assign]
    cwd, path, before = os.getcwd(), list(sys.path), set(sys.modules)
    config_loading.logger.addHandler(handler)
    os.chdir(root)
    sys.path.insert(0, str(root))
    try:
        load_project_module(root, "cluster_page_laptop_train", "train.py").main(args)
    finally:
        config_loading.logger.removeHandler(handler)
        os.chdir(cwd)
        sys.path[:] = path
        for name in set(sys.modules) - before:
            if name == "myproj" or name.startswith("myproj."):  # the runtime's, before the rename
                del sys.modules[name]
    return [record.getMessage() for record in records]


def test_the_page_is_linked_from_the_readme_and_own_project():
    assert "(docs/cluster.md)" in (ROOT / "README.md").read_text()
    assert "(cluster.md)" in OWN_PROJECT.read_text()


def test_the_rename_leaves_only_areal_in_the_script_and_the_workflow(project: Path):
    for path in ("myproj/word_problems.py", "train.py"):
        text = (project / path).read_text()
        assert "areal_runtime" not in text, path
        assert "from areal." in text, path
    assert "from areal import PPOTrainer" in (project / "train.py").read_text()
    # The generated test stays on the runtime, as the page says.
    assert "areal_runtime.testing" in (project / "tests/test_word_problems_workflow.py").read_text()


def areal_config(project: Path, tmp: Path, args: list[str], *extra: str) -> GRPOConfig:
    """Real AReaL's ``load_expr_config`` on a page command line, with the storage in ``tmp``."""
    storage = [f"cluster.fileroot={tmp}/fileroot", f"cluster.name_resolve.nfs_record_root={tmp}/nr"]
    cwd = os.getcwd()
    os.chdir(project)  # --config cluster.yaml is relative, as on the cluster
    try:
        return load_expr_config([*args, *storage, *extra], GRPOConfig)[0]
    finally:
        os.chdir(cwd)


def test_every_command_line_on_the_page_loads_in_areal(project: Path, tmp_path: Path):
    lines = cluster_command_lines(PAGE.read_text())
    assert len(lines) >= 4, lines  # the run=areal line, vLLM, Ray, Slurm
    backends = set()
    for args in lines:
        config = areal_config(project, tmp_path, args)
        assert isinstance(config, GRPOConfig)
        rollout = ModelAllocation.from_str(config.rollout.backend, name="rollout")
        actor = ModelAllocation.from_str(config.actor.backend, name="actor")
        backends.add(rollout.backend)
        gpus = config.cluster.n_nodes * config.cluster.n_gpus_per_node
        assert rollout.world_size + actor.world_size == gpus, args
        assert config.scheduler.type in ("local", "ray", "slurm"), args
        assert all(spec.gpu == 1 for spec in config.actor.scheduling_spec), args
        assert config.rollout.scheduling_spec == config.actor.scheduling_spec
        assert config.tokenizer_path == config.actor.path == config.sglang.model_path
        assert not config.allocation_mode  # deprecated in AReaL 1.0.4
    assert backends == {"sglang", "vllm"}
    # AReaL's loader is strict: a misspelled key would not pass silently.
    with pytest.raises(Exception, match="backnd"):
        areal_config(project, tmp_path, lines[0], "+rollout.backnd=sglang:d4")


def resolves(cls: Any, path: str) -> bool:
    """Whether ``a.b.c`` names a field through AReaL's (possibly optional) config dataclasses."""
    for part in path.split("."):
        if not dataclasses.is_dataclass(cls) or part not in {f.name for f in fields(cls)}:
            return False
        hint = typing.get_type_hints(cls)[part]
        inner = [a for a in typing.get_args(hint) if a is not type(None)]
        union = typing.get_origin(hint) in (typing.Union, types.UnionType)
        cls = inner[0] if union and inner else hint
    return True


def test_every_config_key_the_page_names_exists_in_areal():
    text = PAGE.read_text()
    top = {f.name for f in dataclasses.fields(GRPOConfig)}
    named = {
        m.group(1)
        for m in re.finditer(r"`([a-z_]+(?:\.[a-z_]+)+)(?:[:=][^`]*)?`", text)
        if m.group(1).split(".")[0] in top
    }
    assert len(named) > 30, sorted(named)  # the tables were found
    missing = sorted(key for key in named if not resolves(GRPOConfig, key))
    assert not missing, f"keys the page names that AReaL 1.0.4 does not have: {missing}"


def is_module(name: str) -> bool:
    try:
        return importlib.util.find_spec(name) is not None
    except ModuleNotFoundError:  # a parent is a module, not a package
        return False


def test_every_areal_module_the_page_names_exists():
    names = set(re.findall(r"\bareal(?:\.\w+)+", PAGE.read_text()))
    assert "areal.infra.launcher.local" in names
    for name in sorted(names):
        module, attrs = name, []
        while not is_module(module):
            module, _, attr = module.rpartition(".")
            attrs.insert(0, attr)
        obj = importlib.import_module(module)
        for attr in attrs:
            assert hasattr(obj, attr), f"{name}: {module} has no {'.'.join(attrs)}"
            obj = getattr(obj, attr)


class RolloutOnCPU:
    """Stands in for ``areal.PPOTrainer``: AReaL's rollout of the step's batch, without GPUs.

    ``train`` resolves the workflow as AReaL's rollout workers do and runs the rows of
    ``data/word_problems.jsonl`` through AReaL's ``WorkflowExecutor`` on a LocalEngine serving
    ``actor.path``; the trajectories land in ``RolloutOnCPU.trajectories``.
    """

    rows: ClassVar[list[dict[str, Any]]] = []
    trajectories: ClassVar[list[dict[str, Any]]] = []
    datasets: ClassVar[list[Any]] = []

    def __init__(self, config: GRPOConfig, train_dataset: Any = None, valid_dataset: Any = None):
        self.config = config
        RolloutOnCPU.datasets.append(train_dataset)

    def __enter__(self) -> RolloutOnCPU:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def train(self, workflow: Any, workflow_kwargs: dict[str, Any] | None = None, **_: Any) -> None:
        from areal_runtime.engine.local import LocalEngine

        logger = logging.getLogger("rollout")
        stub = types.SimpleNamespace(config=self.config.rollout, logger=logger)
        resolved = RemoteInfEngine._resolve_workflow(
            stub, workflow, workflow_kwargs, group_size=self.config.gconfig.n_samples
        )
        engine = LocalEngine.from_pretrained(self.config.actor.path)
        rollout = dataclasses.replace(self.config.rollout, check_trajectory_format=True)
        executor = WorkflowExecutor(rollout, engine)
        executor.initialize(train_data_parallel_size=1)
        try:
            RolloutOnCPU.trajectories = executor.rollout_batch(self.rows, resolved)
        finally:
            executor.destroy()
            engine.close()


def load_project_module(project: Path, name: str, path: str) -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(name, project / path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_renamed_script_runs_in_real_areal(project: Path, tmp_path: Path, monkeypatch):
    from areal_runtime.models.default_model import save_default_model

    (launch,) = [shlex.split(line)[2:] for line in sh_lines(PAGE.read_text(), run="areal")]
    model = save_default_model(tmp_path / "model")  # stands in for the Hugging Face model id
    monkeypatch.chdir(project)  # `python3 train.py --config cluster.yaml` in the project
    monkeypatch.syspath_prepend(str(project))  # `pip install -e .` of the project
    for name in [m for m in sys.modules if m == "myproj" or m.startswith("myproj.")]:
        monkeypatch.delitem(sys.modules, name)
    data = (project / "data/word_problems.jsonl").read_text()
    rows = [json.loads(line) for line in data.splitlines()]
    monkeypatch.setattr(RolloutOnCPU, "rows", rows)
    train = load_project_module(project, "cluster_page_train", "train.py")
    monkeypatch.setattr(train, "PPOTrainer", RolloutOnCPU)
    fileroot = tmp_path / "fileroot"
    train.main([
        *launch,
        f"cluster.fileroot={fileroot}",
        f"cluster.name_resolve.nfs_record_root={tmp_path}/nr",
        f"actor.path={model}",
        "gconfig.max_new_tokens=16",  # the embedded model's answers are short
    ])  # fmt: skip

    # AReaL's get_custom_dataset outside SPMD mode: a dataset its data service loads on the cluster.
    assert type(RolloutOnCPU.datasets[-1]).__name__ == "RDataset"
    trajectories = RolloutOnCPU.trajectories
    assert len(trajectories) == len(rows)  # every episode accepted, none failed
    n_samples = 8  # the page's gconfig.n_samples: AReaL ran each row as one group
    for traj in trajectories:
        assert check_trajectory_format(traj, batch_size=n_samples) is True
        assert (traj["loss_mask"].sum(dim=1) > 0).all()
        generated = traj["loss_mask"].bool()
        assert (traj["logprobs"][generated] <= 0).all()
        assert set(traj["rewards"].tolist()) <= {0.0, 1.0}
    batch = concat_padded_tensors(trajectories)
    assert batch["input_ids"].shape[0] == n_samples * len(rows)

    # Where the page says to look: AReaL's config copy and the dumped trajectories.
    (log_dir,) = fileroot.glob("logs/*/word-problems/run1")
    assert (log_dir / "config.yaml").is_file()
    dumped = [json.loads(line) for f in log_dir.glob("rollout/*/*.jsonl") for line in f.open()]
    assert len(dumped) == n_samples * len(rows)
    assert {"prompt", "completion", "reward"} <= set(dumped[0])


def test_without_the_rename_areal_takes_the_workflow_for_an_agent(project: Path):
    """Section 7, item 4: a workflow on the runtime's RolloutWorkflow is not AReaL's."""
    source = renamed((project / "myproj/word_problems.py").read_text())  # back to areal_runtime
    module = types.ModuleType("cluster_page_unrenamed")
    exec(compile(source, "word_problems.py", "exec"), module.__dict__)
    cls = module.WordProblemsWorkflow
    assert not issubclass(cls, RolloutWorkflow)
    stub = types.SimpleNamespace(config=None, logger=logging.getLogger("rollout"))
    with pytest.raises(ValueError, match="agent workflows"):
        RemoteInfEngine._resolve_workflow(stub, cls, {}, group_size=1)
