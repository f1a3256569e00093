__all__ = [
    "EchoWorkflow",
    "CalcWorkflow",
]

# Name -> module; imported on first attribute access.
_LAZY_IMPORTS = {
    "EchoWorkflow": "pkg.workflow.echo",  # the first one
    "CalcWorkflow": "pkg.workflow.calc",
}
