# SPDX-License-Identifier: Apache-2.0
"""``current_platform`` at AReaL's path (``areal.infra.platforms``): which accelerator is here.

The runtime runs on one machine's CPU or one CUDA GPU; ``current_platform`` answers the few
questions AReaL's code and tests ask of it (``device_type``, ``device_count()``,
``synchronize()``). torch is imported on first use, not at import, so importing this module
stays cheap.
"""

from __future__ import annotations

from typing import Any


class Platform:
    """The accelerator (or CPU) this process computes on."""

    def __init__(self, device_type: str, device_name: str) -> None:
        self.device_type = device_type
        self.device_name = device_name

    @property
    def is_cuda(self) -> bool:
        return self.device_type == "cuda"

    def device_count(self) -> int:
        """Visible accelerators; 0 on a CPU-only machine."""
        if not self.is_cuda:
            return 0
        import torch

        return torch.cuda.device_count()

    def current_device(self) -> int:
        if not self.is_cuda:
            return 0
        import torch

        return torch.cuda.current_device()

    def synchronize(self) -> None:
        if self.is_cuda:
            import torch

            torch.cuda.synchronize()


class _LazyPlatform:
    """Detects the platform on first attribute access (no CUDA initialisation at import)."""

    def __init__(self) -> None:
        self._platform: Platform | None = None

    def _detect(self) -> Platform:
        if self._platform is None:
            import torch

            if torch.cuda.is_available():
                self._platform = Platform("cuda", torch.cuda.get_device_name())
            else:
                self._platform = Platform("cpu", "CPU")
        return self._platform

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        return getattr(self._detect(), name)


current_platform: Any = _LazyPlatform()

__all__ = ["Platform", "current_platform"]
