# comment before the imports
from .a import A
from .b import B
from .calc import CalcWorkflow

__all__ = (
    "A",
    "B",
    "CalcWorkflow",
)
