# SPDX-License-Identifier: Apache-2.0

__all__ = [
    "EchoWorkflow",
]

# Name -> module; imported on first attribute access, as in AReaL.
_LAZY_IMPORTS = {
    "EchoWorkflow": "myproj.workflow.echo",
}


def __getattr__(name: str):
    if name in _LAZY_IMPORTS:
        import importlib

        value = getattr(importlib.import_module(_LAZY_IMPORTS[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return list(__all__)
