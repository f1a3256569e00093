# SPDX-License-Identifier: Apache-2.0
"""The trainer of the online example: AReaL's examples/openclaw/train.py, ``areal`` -> ``areal_runtime``.

There is no dataset and no workflow: with ``rollout.agent.mode: online`` the trainer serves the
model it trains on a gateway, prints ``Proxy gateway available at http://HOST:PORT`` and trains
on the sessions an outside agent (``agent.py``) runs there.

python examples/online_agent/train.py --config examples/online_agent/config.yaml
"""

import sys

from areal_runtime import PPOTrainer
from areal_runtime.api.cli_args import PPOConfig, load_expr_config


def main(args):
    config, _ = load_expr_config(args, PPOConfig)

    with PPOTrainer(config) as trainer:
        trainer.train()


if __name__ == "__main__":
    main(sys.argv[1:])
