# The two commands a newcomer runs on a fresh machine: `make demo` and `make test`.
.PHONY: setup demo test lint bench

setup:
	bash scripts/bootstrap.sh

demo: setup
	bash scripts/demo.sh

test: setup
	bash scripts/install_chromium.sh
	.venv/bin/python -m pytest -q -p no:cacheprovider

lint: setup
	.venv/bin/ruff check . && .venv/bin/ruff format --check . && .venv/bin/areal-lint --exclude eval_files .
