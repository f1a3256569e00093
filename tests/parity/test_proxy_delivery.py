# SPDX-License-Identifier: Apache-2.0
"""An answer the agent never received: AReaL records it, areal_runtime does not.

AReaL's proxy adds a completion to the session's cache once the engine returns it, whether or
not the client is still there to read it, so ``set_last_reward`` lands on it and the export
carries it. The runtime's proxy records it as pending until the answer is delivered
(``areal_runtime/experimental/openai/proxy/delivery.py``); a pending or discarded answer takes
no reward without an id and is not exported.
"""

from __future__ import annotations

from .conftest import mod

USER = {"role": "user", "content": "2+2?"}


def response(pkg: str):
    return mod(pkg, "api.io_struct").ModelResponse(
        input_tokens=[1, 2], output_tokens=[3], output_logprobs=[-0.1], output_versions=[0]
    )


def areal_interaction(cid: str):
    types = mod("areal", "experimental.openai.types")
    return types.InteractionWithTokenLogpReward(
        model_response=response("areal"),
        messages=[USER],
        output_message_list=[{"role": "assistant", "content": "4"}],
        _interaction_id=cid,
    )


def runtime_interaction(cid: str):
    types = mod("areal_runtime", "experimental.openai.types")
    return types.InteractionWithTokenLogpReward(
        messages=[USER],
        model_response=response("areal_runtime"),
        output_message_list=[{"role": "assistant", "content": "4"}],
        _interaction_id=cid,
    )


def test_deliberate_an_answer_the_agent_never_received_is_not_rewarded_or_exported() -> None:
    # AReaL: the second answer (its client timed out) is the "last" one and is exported.
    areal = mod("areal", "experimental.openai.cache").InteractionCache()
    areal["delivered"] = areal_interaction("delivered")
    areal["timed-out"] = areal_interaction("timed-out")
    areal.set_last_reward(1.0)
    assert areal["timed-out"].reward == 1.0 and areal["delivered"].reward is None
    assert set(areal.export_interactions("individual")) == {"delivered", "timed-out"}

    # areal_runtime: the proxy records it pending and never confirms it.
    runtime = mod("areal_runtime", "experimental.openai.cache").InteractionCache()
    runtime.add(runtime_interaction("delivered"))
    runtime.add(runtime_interaction("timed-out"), delivered=False)
    runtime.set_last_reward(1.0)
    assert runtime["delivered"].reward == 1.0 and runtime["timed-out"].reward is None
    assert set(runtime.export_interactions("individual")) == {"delivered"}
    runtime.discard("timed-out")  # what the proxy does once the client is known to be gone
    assert list(runtime) == ["delivered"]
