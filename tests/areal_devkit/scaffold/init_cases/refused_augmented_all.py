from .a import A

__all__ = ["A"]
__all__ += ["B"]
