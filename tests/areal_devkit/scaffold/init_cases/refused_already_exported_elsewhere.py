__all__ = ["CalcWorkflow"]
_LAZY_IMPORTS = {"CalcWorkflow": "pkg.workflow.other"}
