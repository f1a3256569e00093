_LAZY_IMPORTS = {"A": "pkg.workflow.a"}
