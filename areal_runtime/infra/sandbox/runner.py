# SPDX-License-Identifier: Apache-2.0
"""``DaytonaRunner`` at AReaL's path: a synchronous runner backed by a Daytona cloud sandbox.

Importable without the SDK, as in AReaL; constructing it without the SDK raises an ImportError
that names the install and the local alternative (``LocalRunner``, same ``run`` and result).
The remote calls follow the SDK's documented API and are not exercised by this repository's
tests (they need an account); the local runner is.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from typing import Any

from areal_runtime.infra.sandbox._client import INSTALL_HINT, DaytonaClientManager
from areal_runtime.infra.sandbox.result import TIMEOUT_EXIT_CODE, RunResult, last_non_empty_line


def _load_daytona_sdk() -> Any:
    try:
        import daytona
    except ImportError as exc:
        raise ImportError(INSTALL_HINT) from exc
    return daytona


class DaytonaRunner:
    """``run(code)`` in one Daytona sandbox, created on first use and deleted by ``close``."""

    def __init__(
        self,
        *,
        snapshot: str | None = None,
        image: Any = None,
        resources: Any = None,
        env_vars: dict[str, str] | None = None,
        network_block_all: bool = False,
        labels: dict[str, str] | None = None,
        create_timeout: float = 60.0,
        default_timeout: int = 30,
        language: str = "python",
        ephemeral: bool = True,
    ) -> None:
        self._sdk = _load_daytona_sdk()
        if image is not None and snapshot is not None:
            raise ValueError("pass either snapshot or image, not both")
        if resources is not None and image is None:
            raise ValueError("Daytona resources need an image (not a snapshot)")
        self.snapshot, self.image, self.resources = snapshot, image, resources
        self.env_vars = dict(env_vars or {})
        self.network_block_all = network_block_all
        self.labels = dict(labels or {})
        self.create_timeout = create_timeout
        self.default_timeout = default_timeout
        self.language = language
        self.ephemeral = ephemeral
        self._sandbox: Any = None
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self._thread.start()

    def _call(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result()

    async def _sandbox_now(self) -> Any:
        if self._sandbox is None:
            common = {
                "language": self.language,
                "env_vars": self.env_vars or None,
                "network_block_all": self.network_block_all,
                "labels": self.labels or None,
                "ephemeral": self.ephemeral,
            }
            if self.image is not None:
                params = self._sdk.CreateSandboxFromImageParams(
                    image=self.image, resources=self.resources, **common
                )
            else:
                params = self._sdk.CreateSandboxFromSnapshotParams(snapshot=self.snapshot, **common)
            client = await DaytonaClientManager.get_client()
            self._sandbox = await client.create(params, timeout=self.create_timeout)
        return self._sandbox

    async def _arun(self, code: str, timeout: int) -> RunResult:
        try:
            sandbox = await self._sandbox_now()
            response = await sandbox.process.code_run(code, timeout=timeout)
        except self._sdk.DaytonaTimeoutError as exc:
            return RunResult("", str(exc), TIMEOUT_EXIT_CODE, [], str(exc))
        except self._sdk.DaytonaError as exc:
            return RunResult("", str(exc), 1, [], str(exc))
        output = response.result or ""
        artifacts = getattr(response, "artifacts", None)
        charts = list(getattr(artifacts, "charts", None) or [])
        if response.exit_code == 0:
            return RunResult(output, "", 0, charts, None)
        error = last_non_empty_line(output) or f"Process exited with code {response.exit_code}"
        return RunResult("", output, response.exit_code, charts, error)

    def start(self) -> DaytonaRunner:
        self._call(self._sandbox_now())
        return self

    def run(
        self,
        code: str,
        *,
        timeout: int | None = None,
        on_stdout: Callable[[str], None] | None = None,
        on_stderr: Callable[[str], None] | None = None,
    ) -> RunResult:
        result = self._call(self._arun(code, timeout or self.default_timeout))
        if on_stdout is not None and result.stdout:
            on_stdout(result.stdout)
        if on_stderr is not None and result.stderr:
            on_stderr(result.stderr)
        return result

    def close(self) -> None:
        sandbox, self._sandbox = self._sandbox, None
        if sandbox is not None:
            self._call(sandbox.delete(timeout=self.create_timeout))
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)

    def __enter__(self) -> DaytonaRunner:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()
