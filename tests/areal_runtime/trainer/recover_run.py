# SPDX-License-Identifier: Apache-2.0
"""A real training run with recover checkpoints every step, for the SIGKILL test.

python recover_run.py FILEROOT STEPS
"""

import sys

from areal_devkit.commands.train import default_task_rows
from areal_runtime import PPOTrainer
from areal_runtime.api.cli_args import GRPOConfig, NormConfig, OptimizerConfig


def config(fileroot: str, steps: int) -> GRPOConfig:
    c = GRPOConfig(experiment_name="recover-test", trial_name="t0", seed=3)
    c.total_train_steps, c.total_train_epochs = steps, 10
    c.gconfig = c.gconfig.new(n_samples=4, max_new_tokens=8)
    c.train_dataset.batch_size = c.rollout.consumer_batch_size = 4
    c.rollout.max_head_offpolicyness = 1
    c.actor.path = "underconfident"
    c.actor.optimizer = OptimizerConfig(lr=3e-4, weight_decay=0.0)
    c.actor.ppo_n_minibatches = 2
    c.actor.reward_norm = NormConfig(mean_level="group", std_level="group", group_size=4)
    for section in (c.stats_logger, c.recover, c.saver):
        section.fileroot = fileroot
    c.recover.mode = "auto"
    c.recover.freq_steps = 1
    return c


if __name__ == "__main__":
    fileroot, steps = sys.argv[1], int(sys.argv[2])
    c = config(fileroot, steps)
    with PPOTrainer(c, default_task_rows()[:64]) as trainer:
        trainer.train(
            workflow="examples.arithmetic_rlvr:ArithmeticRLVRWorkflow",
            workflow_kwargs={"gconfig": c.gconfig, "tokenizer": trainer.tokenizer},
        )
