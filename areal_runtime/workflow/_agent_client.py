# SPDX-License-Identifier: Apache-2.0
"""Where an agent workflow's SDK client points: AReaL's rule, in one place.

The proxy passes ``base_url``, ``api_key`` and ``http_client`` in ``extra_kwargs``; a
subprocess agent may get only the environment (``OPENAI_BASE_URL`` / ``ANTHROPIC_BASE_URL``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class ClientSettings:
    base_url: str | None
    api_key: str | None
    http_client: Any


def client_settings(extra_kwargs: dict[str, Any], api: str = "OPENAI") -> ClientSettings:
    """``extra_kwargs`` first, then ``{api}_BASE_URL`` / ``{api}_API_KEY`` from the environment."""
    return ClientSettings(
        base_url=extra_kwargs.get("base_url") or os.getenv(f"{api}_BASE_URL"),
        api_key=extra_kwargs.get("api_key") or os.getenv(f"{api}_API_KEY"),
        http_client=extra_kwargs.get("http_client"),
    )


def missing_sdk(exc: ModuleNotFoundError, extra: str = "agents") -> ImportError:
    """The ImportError to raise when an agent's SDK is missing: it names the extra to install."""
    return ImportError(
        f"this agent workflow needs the {exc.name!r} package (missing); install it with "
        f"pip install 'areal-devkit[{extra}]'"
    )
