# SPDX-License-Identifier: Apache-2.0
"""``/export_trajectories``'s body in AReaL's wire format, so AReaL's own client reads it.

AReaL answers ``{"interactions": {id: {"tensor_dict": {key: tensor}, "reward": r,
"interaction_id": id}}}`` with each tensor as its RPC serializer writes it: ``{"type":
"tensor", "data": base64 of the raw little-endian buffer, "shape": [...], "dtype":
"torch.int32"}``. Writing the same lets AReaL's ``OpenAIProxyWorkflow`` (its
``OpenAIProxyClient.export_interactions``) train from ``areal-devkit serve`` and lets this
runtime's ``OpenAIProxyWorkflow`` read AReaL's proxy.
"""

from __future__ import annotations

import base64
from typing import Any

_DTYPES = ("float32", "float64", "int32", "int64", "int16", "int8", "uint8", "bool")


def tensor_json(tensor: Any) -> dict[str, Any]:
    """One CPU tensor as AReaL's ``SerializedTensor`` dict."""
    array = tensor.detach().cpu().contiguous().numpy()
    return {
        "type": "tensor",
        "data": base64.b64encode(array.tobytes()).decode("ascii"),
        "shape": list(tensor.shape),
        "dtype": str(tensor.dtype),
    }


def tensor_of(value: dict[str, Any]) -> Any:
    """The tensor a ``SerializedTensor`` dict holds; a clear error for any other dtype."""
    import numpy as np
    import torch

    name = str(value.get("dtype", "")).removeprefix("torch.")
    if name not in _DTYPES:
        raise ValueError(f"unsupported tensor dtype {value.get('dtype')!r} in the export")
    raw = base64.b64decode(value["data"])
    array = np.frombuffer(raw, dtype=np.dtype(name if name != "bool" else np.bool_)).copy()
    return torch.from_numpy(array).reshape(value["shape"])


def export_body(exported: dict[str, Any]) -> dict[str, Any]:
    """The response body for the exported interactions of one session."""
    return {
        "interactions": {
            cid: {
                "tensor_dict": {k: tensor_json(v) for k, v in item.to_tensor_dict().items()},
                "reward": item.reward,
                "interaction_id": cid,
            }
            for cid, item in exported.items()
        }
    }


def tensor_dicts(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``[1, L]`` tensor dict of each exported interaction, in export order."""
    interactions = body.get("interactions")
    if not isinstance(interactions, dict):
        raise ValueError("the export has no 'interactions' object (not AReaL's export format)")
    rows = []
    for cid, item in interactions.items():
        if "tensor_dict" not in item:
            raise ValueError(f"interaction {cid!r} was exported without tensors")
        rows.append({k: tensor_of(v) for k, v in item["tensor_dict"].items()})
    return rows
