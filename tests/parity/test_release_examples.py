# SPDX-License-Identifier: Apache-2.0
"""AReaL's own examples, renamed, train here: each example folder comes from the pinned
release, its ``areal`` imports are renamed mechanically, and its scripts run unchanged with
command-line overrides only (``LAPTOP`` plus the dataset paths), on the embedded model.

The table in docs/areal_examples.md lists every example folder of the release: these train,
the others say why not and what is checked of them instead (test_release_configs.py loads
every YAML). A test keeps the table's list of folders equal to the release's.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from .areal_release import ROOT, release_tree
from .release_examples import LAPTOP, Project, stats_rows

pytestmark = pytest.mark.slow

TRAINED_KEYS = ("ppo_actor/update/grad_norm", "reward_mean", "ppo_actor/n_seqs")


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return Project(tmp_path)


def train(project: Project, folder: str, script: str, config: str, *overrides: str) -> None:
    """Run ``examples/{folder}/{script} --config examples/{folder}/{config}`` laptop-sized and
    check it trained two steps (a statistics row per step with a gradient and a reward)."""
    fileroot = project.root / "out"
    proc = project.python(
        f"examples/{folder}/{script}",
        "--config",
        f"examples/{folder}/{config}",
        *LAPTOP,
        f"++cluster.fileroot={fileroot}",
        *overrides,
        timeout=540,
    )
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-4000:]
    rows = stats_rows(fileroot)
    assert [row["global_step"] for row in rows] == [1, 2]
    for key in TRAINED_KEYS:
        assert all(isinstance(row.get(key), float) for row in rows), (key, rows[0].keys())
    assert " 2/2 " in proc.stdout  # the per-step console row of the last step


def on_gsm8k_copy(project: Project) -> tuple[str, str]:
    data = project.gsm8k_copy()
    return f"++train_dataset.path={data}", f"++valid_dataset.path={data}"


def test_countdown_generates_its_data_and_trains(project: Project) -> None:
    """countdown.py writes the data with the model's tokenizer (the README's steps)."""
    project.add_example("countdown")
    from areal_runtime.models.default_model import save_default_model

    model = save_default_model(project.root / "model")
    (project.root / "data/countdown/qwen").mkdir(parents=True)
    proc = project.python(
        "examples/countdown/countdown.py", "--num_samples", "16", "--eval_size", "4",
        "--tokenizer_path", str(model),
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    train(
        project, "countdown", "train.py", "train_config.yaml",
        "++train_dataset.path=data/countdown/qwen/train_e.jsonl",
        "++valid_dataset.path=data/countdown/qwen/test_e.jsonl",
    )  # fmt: skip


def test_math_gsm8k_rl_trains_on_a_local_gsm8k_copy(project: Project) -> None:
    project.add_example("math")
    train(project, "math", "gsm8k_rl.py", "gsm8k_grpo.yaml", *on_gsm8k_copy(project))


def test_multi_turn_math_trains(project: Project) -> None:
    project.add_example("multi_turn_math")
    train(
        project, "multi_turn_math", "gsm8k_rl_mt.py", "gsm8k_grpo_mt.yaml",
        *on_gsm8k_copy(project),
    )  # fmt: skip


def test_openai_agents_trains_with_its_yaml_import_strings_renamed(project: Project) -> None:
    folder = project.add_example("openai_agents")
    text = (folder / "config.yaml").read_text()
    assert '"areal_runtime.reward.gsm8k.gsm8k_reward_fn"' in text  # the rename reached them
    train(project, "openai_agents", "train_agents.py", "config.yaml", *on_gsm8k_copy(project))


def test_agent_workflow_quick_start_trains(project: Project) -> None:
    project.add_example("agent_workflow")
    train(project, "agent_workflow", "train.py", "config.yaml", *on_gsm8k_copy(project))


def test_tir_runs_and_its_length_cut_is_refused_before_training(project: Project) -> None:
    """TIR runs with its Python and calculator tools on ToRL's parquet format (converted by
    get_custom_dataset because the path names torl_data; ``tir.tool_timeout: 30`` read as a
    float). Its workflow cuts each trajectory at ``tir.max_length`` (``seq[:max_len]``),
    dropping sampled tokens past it; the first-batch check refuses that, naming the cause,
    where AReaL trains on it silently."""
    project.add_example("tir")
    data = project.torl_copy()
    # The cut needs an episode that outgrows max_length. A model that answers and stops never
    # does, so the EOS is held back for each 8-token turn (min_new_tokens): TIR keeps asking
    # for more until the context reaches max_length, and slices the last turn there unless it
    # ends exactly on the limit (not for all 8 episodes of the first batch).
    proc = project.python(
        "examples/tir/train_tir.py", "--config", "examples/tir/tir_math_config.yaml", *LAPTOP,
        "++gconfig.min_new_tokens=8", f"++cluster.fileroot={project.root / 'out'}",
        f"++train_dataset.path={data / 'train.parquet'}",
        f"++valid_dataset.path={data / 'test.parquet'}", "++valid_dataset.batch_size=4",
        "++tir.max_length=256",
        timeout=400,
    )  # fmt: skip
    assert proc.returncode != 0, "TIR did not cut an episode at tir.max_length"
    assert "refusing to train on these trajectories" in proc.stderr, proc.stderr[-3000:]
    assert "the completion is cut short in the trajectory" in proc.stderr, proc.stderr[-3000:]


def test_tirs_own_tests_pass(project: Project) -> None:
    """examples/tir/tests: the tools, the tool manager, the workflow with a fake engine and the
    optional Daytona dependency (its tests that need a Daytona account skip themselves)."""
    project.add_example("tir")
    proc = project.python("-m", "pytest", "-q", "-p", "no:cacheprovider", "examples/tir/tests")
    assert proc.returncode == 0, proc.stdout[-4000:]
    counts = dict(
        (word, int(n))
        for n, word in re.findall(r"(\d+) (passed|skipped|failed|error)", proc.stdout)
    )
    assert counts.get("passed", 0) >= 11 and not counts.get("failed") and not counts.get("error")


def documented_examples() -> dict[str, str]:
    """``{folder: status}`` from the table in docs/areal_examples.md."""
    text = (ROOT / "docs/areal_examples.md").read_text()
    rows = re.findall(r"^\| `([\w/]+)/` \| ([^|]+?) \|", text, flags=re.M)
    return dict(rows)


def test_the_docs_table_lists_every_release_example_and_these_tests() -> None:
    folders = sorted(
        p.name for p in (release_tree() / "examples").iterdir() if p.is_dir() and p.name != "docs"
    )
    documented = documented_examples()
    assert sorted(documented) == folders
    tested = {
        "countdown", "math", "multi_turn_math", "openai_agents", "agent_workflow",
    }  # fmt: skip
    assert {f for f, status in documented.items() if status == "trains"} == tested
    assert documented["tir"] == "runs, refused"
    assert documented["openclaw"] == "trains online"  # test_openclaw_online.py
