"""Workflows of this project."""
from .calc import CalcWorkflow
__all__ = ["CalcWorkflow"]
