from .calc import CalcWorkflow
__all__ = ["CalcWorkflow"]
