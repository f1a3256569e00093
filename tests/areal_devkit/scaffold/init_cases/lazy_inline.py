__all__ = ["A", "B"]
_LAZY_IMPORTS = {"A": "pkg.workflow.a", "B": "pkg.workflow.b"}
