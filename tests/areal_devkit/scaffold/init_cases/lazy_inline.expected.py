__all__ = ["A", "B", "CalcWorkflow"]
_LAZY_IMPORTS = {"A": "pkg.workflow.a", "B": "pkg.workflow.b", "CalcWorkflow": "pkg.workflow.calc"}
