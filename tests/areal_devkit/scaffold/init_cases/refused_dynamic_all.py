from .a import A

__all__ = [name for name in dir() if not name.startswith("_")]
