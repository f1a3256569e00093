# SPDX-License-Identifier: Apache-2.0
"""``rollout.agent.mode: online``: train on sessions that outside agents run on a gateway.

As AReaL's online mode (``examples/openclaw``): the trainer serves the proxy with AReaL's
gateway API on the model being trained and prints its address; an outside client starts a
session there with the admin key (``/rl/start_session``), talks to the model with the session
key, sets a reward, and ends the session or refreshes it with the same key. Each training
episode is ``OpenAIProxyWorkflow(mode="online")``: it grants one session of capacity, waits for
an outside session to end and trains on its export. The staleness control therefore also
bounds how many outside sessions can be open: past it ``/rl/start_session`` answers 429.

The gateway listens on ``127.0.0.1`` and a free port unless ``AREAL_GATEWAY_HOST`` /
``AREAL_GATEWAY_PORT`` say otherwise (AReaL picks the host's address and a free port); beyond
loopback it needs an admin key other than the default.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from typing import Any

from areal_runtime.trainer.errors import TrainingInputError

logger = logging.getLogger("areal_runtime.trainer")

HOST_ENV = "AREAL_GATEWAY_HOST"
PORT_ENV = "AREAL_GATEWAY_PORT"


def online_steps(config: Any, total_epochs: int | None = None) -> int:
    """AReaL's count for online mode: epochs x (total_train_steps // epochs), both required."""
    epochs = config.total_train_epochs if total_epochs is None else total_epochs
    total = config.total_train_steps
    if total is None:
        raise TrainingInputError(
            "rollout.agent.mode=online has no dataset to count steps by: set total_train_steps "
            "(and total_train_epochs), e.g. total_train_steps=10"
        )
    if epochs <= 0 or total // epochs < 1:
        raise TrainingInputError(
            f"total_train_steps ({total}) must be >= total_train_epochs ({epochs}) so that an "
            "epoch has at least one step"
        )
    return min(epochs * (total // epochs), total)


def online_dataset(config: Any) -> list[dict[str, Any]]:
    """The empty rows AReaL's online dataloader yields: an epoch's worth, so that epochs count
    ``total_train_steps // total_train_epochs`` steps as in AReaL."""
    per_epoch = online_steps(config) // config.total_train_epochs
    return [{} for _ in range(per_epoch * max(1, config.train_dataset.batch_size))]


def gateway_address() -> tuple[str, int]:
    """Where the gateway listens: the environment's choice, else loopback and a free port."""
    host = os.environ.get(HOST_ENV) or "127.0.0.1"
    port_text = os.environ.get(PORT_ENV) or "0"
    try:
        port = int(port_text)
    except ValueError:
        raise TrainingInputError(f"{PORT_ENV} must be a port number, got {port_text!r}") from None
    if not 0 <= port < 65536:
        raise TrainingInputError(f"{PORT_ENV} must be in 0..65535, got {port}")
    return host, port


class OnlineGateway:
    """The gateway of an online run and the workflow whose episodes wait on it.

    An async context manager the loop enters around training (as it enters an agent's proxy).
    """

    def __init__(self, agent: Any, announce: Callable[[str], None] = print) -> None:
        from areal_runtime.experimental.openai.proxy import OpenAIProxyWorkflow

        self.agent = agent
        self.admin_api_key = getattr(agent, "admin_api_key", None) or "areal-admin-key"
        self.proxy: Any = None
        self.workflow = OpenAIProxyWorkflow(
            mode="online",
            proxy_addr="",
            admin_api_key=self.admin_api_key,
            discount=float(agent.turn_discount),
            export_style=agent.export_style,
            proxy_gateway_addr="",
        )
        self.announce = announce

    def attach(self, engine: Any, tokenizer: Any) -> None:
        """Serve ``engine`` (the loop's, which records what it samples) on the gateway."""
        from areal_runtime.experimental.openai.proxy import AgentProxy

        agent = self.agent
        host, port = gateway_address()
        try:
            self.proxy = AgentProxy(
                engine,
                tokenizer,
                transport="socket",
                host=host,
                port=port,
                admin_api_key=self.admin_api_key,
                chat_template_type=agent.chat_template_type,
                engine_max_tokens=agent.engine_max_tokens,
                online=True,  # a session starts only for an episode the staleness control let in
            )
        except ValueError as exc:
            raise TrainingInputError(f"{exc} (rollout.agent.admin_api_key)") from None

    @property
    def address(self) -> str:
        return self.proxy.base_url

    async def __aenter__(self) -> OnlineGateway:
        if self.proxy is None:
            raise RuntimeError("OnlineGateway.attach(engine, tokenizer) first")
        await self.proxy.__aenter__()
        self.workflow.proxy_addr = self.workflow.agent.proxy_gateway_addr = self.address
        message = f"Proxy gateway available at {self.address}"
        logger.info(message)
        self.announce(
            f"{message} (admin key from rollout.agent.admin_api_key; start a session: "
            f"POST {self.address}/rl/start_session)"
        )
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self.proxy.gateway.close("training has finished: this gateway takes no more sessions")
        await self.proxy.__aexit__(*exc)
