"""A plain package that imports its exports eagerly."""

from .base import BaseThing  # the existing export
from .calc import CalcWorkflow

__all__ = ["BaseThing", "CalcWorkflow"]
