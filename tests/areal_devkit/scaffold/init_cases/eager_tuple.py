# comment before the imports
from .a import A
from .b import B

__all__ = (
    "A",
    "B",
)
