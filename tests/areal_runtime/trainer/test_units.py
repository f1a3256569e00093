# SPDX-License-Identifier: Apache-2.0
"""Config loading, the PPO math, the consistency check, checkpoints and datasets."""

import asyncio
import json
from pathlib import Path

import pytest
import torch

from areal_runtime.api.cli_args import (
    GRPOConfig,
    NormConfig,
    PPOActorConfig,
    RejectionSamplingConfig,
    load_expr_config,
)
from areal_runtime.trainer.consistency import check_first_batch
from areal_runtime.trainer.ppo.actor import advantages, shaped_rewards
from areal_runtime.utils.functional import ppo_actor_loss_fn

YAML = """
experiment_name: e
trial_name: t
cluster: {n_nodes: 4, n_gpus_per_node: 8}
gconfig: {n_samples: 4, max_new_tokens: 16}
actor:
  backend: "fsdp:d4p1t1"
  path: default
  optimizer: {lr: 1.7e-5, eps: 1e-8}
  temperature: ${gconfig.temperature}
  reward_norm:
    mean_level: group
    group_size: ${gconfig.n_samples}
rollout:
  consumer_batch_size: ${train_dataset.batch_size}
train_dataset: {batch_size: 8, path: data.jsonl}
"""


def test_load_expr_config_reads_yaml_interpolation_and_overrides(tmp_path, caplog):
    path = tmp_path / "c.yaml"
    path.write_text(YAML)
    c, file = load_expr_config(
        ["x.py", "--config", str(path), "+gconfig.temperature=0.7", "+actor.eps_clip=0.3"],
        GRPOConfig,
    )
    assert file == str(path.absolute())
    assert c.actor.temperature == 0.7 and c.gconfig.temperature == 0.7  # resolved after overrides
    assert c.actor.optimizer.eps == 1e-8 and c.actor.optimizer.lr == 1.7e-5
    assert c.actor.reward_norm.group_size == 4 and c.rollout.consumer_batch_size == 8
    assert c.eval_gconfig.max_new_tokens == 16  # None -> a copy of gconfig, as in AReaL
    # AReaL's defaults for what was not given
    assert (c.actor.ppo_n_minibatches, c.actor.eps_clip, c.actor.kl_ctl) == (4, 0.3, 0.1)
    assert c.rollout.max_head_offpolicyness == 0 and c.seed == 1
    assert "cluster" in caplog.text and "actor.backend" in caplog.text


@pytest.mark.parametrize(
    ("override", "message"),
    [
        ("actor.epsclip=1", "unknown config key 'actor.epsclip'.*did you mean 'actor.eps_clip'"),
        ("+actor.epsclip=1", "unknown config key 'actor.epsclip'.*did you mean 'actor.eps_clip'"),
        (
            "actor.optimizer.lr=fast",
            "actor.optimizer.lr: .*'fast'.*could not be converted to Float",
        ),
        ("nope=1", "unknown config key 'nope'.*Valid keys at the top level: actor"),
        ("seed=2", r"cannot override seed: c.yaml does not set it. Add it with \+seed=2"),
        ("actor.lr=[1", "cannot read an override"),
        ("+actor.behave_imp_weight_cap=5", r"removed from AReaL: use the rejection_sampling"),
        ("actor.reward_norm.mean_level=tribe", "mean_level must be 'batch', 'group' or None"),
        (
            "+actor.reward_norm.mean_level=group",
            r"c.yaml sets actor.reward_norm.mean_level.*without \+",
        ),
    ],
)
def test_bad_keys_name_the_key_and_the_valid_ones(tmp_path, override, message):
    path = tmp_path / "c.yaml"
    path.write_text(YAML)
    with pytest.raises(ValueError, match=message):
        load_expr_config(["--config", str(path), override], GRPOConfig)


def test_hydra_grammar_and_omegaconf_conversions_as_in_areal(tmp_path):
    """AReaL's loader turns a YAML int into a float field's float (the hand-written one refused
    ``actor.reward_scaling: 10``), and takes Hydra's ``+``/``++``/``~`` overrides."""
    path = tmp_path / "c.yaml"
    path.write_text(YAML.replace("  path: default\n", "  path: default\n  reward_scaling: 10\n"))
    c, _ = load_expr_config(
        ["--config", str(path), "++seed=7", "++actor.kl_ctl=0", "~cluster", "gconfig.n_samples=2"],
        GRPOConfig,
    )
    assert c.actor.reward_scaling == 10.0 and isinstance(c.actor.reward_scaling, float)
    assert (c.seed, c.actor.kl_ctl) == (7, 0.0) and isinstance(c.actor.kl_ctl, float)
    assert c.cluster == {}  # deleted from the file: back to the default
    assert c.actor.reward_norm.group_size == 2  # ${gconfig.n_samples} after the override


def test_a_broken_file_is_a_config_error_naming_it(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text("actor: {lr: [1\n")
    with pytest.raises(ValueError, match=r"c.yaml is not valid YAML"):
        load_expr_config(["--config", str(path)], GRPOConfig)
    with pytest.raises(ValueError, match=r"must end in .yaml"):
        load_expr_config(["--config", str(path.rename(tmp_path / "c.yml"))], GRPOConfig)


def test_group_norm_and_advantages_on_the_last_trained_token():
    actor = PPOActorConfig(reward_norm=NormConfig(mean_level="group", std_level="group"))
    groups = torch.tensor([0, 0, 1, 1])
    score = shaped_rewards(torch.tensor([1.0, 0.0, 1.0, 1.0]), actor, groups)
    assert score[0] > 0 > score[1] and score[2] == score[3] == 0
    mask = torch.tensor([[0, 1, 1, 0]] * 4)
    adv, _ = advantages(score, mask, actor, groups)
    assert torch.equal(adv[0], torch.tensor([0.0, 1.0, 1.0, 0.0]) * score[0])


def test_ppo_loss_clips_and_decoupled_weight_masks_stale_tokens():
    actor = PPOActorConfig(use_decoupled_loss=True, rejection_sampling=RejectionSamplingConfig())
    logp = torch.log(torch.tensor([[0.5, 0.5, 0.9]]))
    prox = torch.log(torch.tensor([[0.5, 0.25, 0.5]]))
    behave = torch.log(torch.tensor([[0.5, 0.25, 0.05]]))  # last: pi_prox/pi_behave = 10 > 5
    adv = torch.ones(1, 3)
    mask = torch.tensor([[0, 1, 1]])
    loss, stats = ppo_actor_loss_fn(
        logp,
        prox,
        behave,
        adv,
        actor.eps_clip,
        mask,
        rejection_sampling=actor.rejection_sampling,
    )
    assert stats["filtered_fraction"] == 0.5 and int(stats["behave_mask"].sum()) == 1
    assert stats["clip_mask"].sum() == 1  # ratio 2 > 1.2 with a positive advantage
    # The kept token's -1.2 over both trained tokens (AReaL's denominator ignores the filter).
    assert loss.item() == pytest.approx(-0.6)


def _traj(ids, mask, lps):
    return {
        "input_ids": torch.tensor([ids]),
        "loss_mask": torch.tensor([mask]),
        "logprobs": torch.tensor([lps]),
        "versions": torch.tensor([[0 if m else -1 for m in mask]]),
        "attention_mask": torch.ones(1, len(ids), dtype=torch.bool),
    }


def test_consistency_check_finds_shifted_masks_and_wrong_logprobs():
    from areal_runtime.api.cli_args import GenerationHyperparameters
    from areal_runtime.api.io_struct import ModelRequest
    from areal_runtime.engine.recording import RecordingEngine
    from areal_runtime.engine.scripted import ScriptedEngine, ScriptedReply
    from areal_runtime.workflow_context import WorkflowContext, reset, set

    recorder = RecordingEngine(
        ScriptedEngine([ScriptedReply(tokens=[7, 8], logprobs=[-0.5, -0.25])])
    )
    token = set(WorkflowContext(task_id=0))
    try:
        gconfig = GenerationHyperparameters(max_new_tokens=4, stop_token_ids=[8])
        asyncio.run(recorder.agenerate(ModelRequest(input_ids=[1, 2], gconfig=gconfig)))
    finally:
        reset(token)
    good = _traj([1, 2, 7, 8], [0, 0, 1, 1], [0, 0, -0.5, -0.25])
    assert check_first_batch([(0, good)], recorder).ok
    shifted = _traj([1, 2, 7, 8], [0, 1, 1, 0], [0, 0, -0.5, -0.25])
    report = check_first_batch([(0, shifted)], recorder)
    assert not report.ok and {"tokens", "loss-mask"} & report.checks_failed()
    wrong = _traj([1, 2, 7, 8], [0, 0, 1, 1], [0, 0, -0.5, -0.5])
    report = check_first_batch([(0, wrong)], recorder)
    assert not report.ok and report.checks_failed() == {"logprobs-engine"}
    assert report.problems[0].position == 3


def test_an_interrupted_save_leaves_the_last_checkpoint(tmp_path):
    from areal_runtime.models.default_model import load_default_model
    from areal_runtime.trainer.checkpoint import save_checkpoint

    model, tok = load_default_model()
    target = save_checkpoint(model, tok, tmp_path / "ckpt", step=1)
    before = {p.name: p.read_bytes() for p in target.iterdir()}

    class Exploding:
        def save_pretrained(self, path):
            Path(path).mkdir()
            (Path(path) / "config.json").write_text("{half")
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        save_checkpoint(Exploding(), tok, target, step=2)
    assert {p.name: p.read_bytes() for p in target.iterdir()} == before
    assert json.loads((target / "trainer_state.json").read_text())["step"] == 1


def test_get_custom_dataset_reads_local_files(tmp_path):
    from areal_runtime.api.cli_args import TrainDatasetConfig
    from areal_runtime.dataset import get_custom_dataset

    (tmp_path / "train.jsonl").write_text(
        json.dumps({"question": "1+1?", "answer": "#### 2"}) + "\n"
    )
    rows = get_custom_dataset("train", TrainDatasetConfig(path=str(tmp_path), type="rl"))
    assert rows[0]["messages"][0]["content"].startswith("1+1?\nPlease put your final answer")
    with pytest.raises(FileNotFoundError, match="no dataset hub"):
        get_custom_dataset("train", TrainDatasetConfig(path="openai/gsm8k"))
    (tmp_path / "x.parquet").write_bytes(b"PAR1")
    try:
        import pyarrow  # noqa: F401
    except ModuleNotFoundError:
        with pytest.raises(ImportError, match="needs pyarrow"):
            get_custom_dataset("train", TrainDatasetConfig(path=str(tmp_path / "x.parquet")))


def test_import_areal_runtime_stays_light():
    import subprocess
    import sys

    code = "import sys, areal_runtime, areal_runtime.trainer; print('torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
    from areal_runtime import PPOTrainer
    from areal_runtime.trainer import PPOTrainer as Same

    assert PPOTrainer is Same
