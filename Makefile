# The two commands a newcomer runs on a fresh machine: `make demo` and `make test`.
.PHONY: setup setup-areal setup-camel setup-envs demo test test-fast parity areal-tests camel lint bench fuzz

# Every extra: what the tests, the linters and the benchmarks import.
setup:
	bash scripts/bootstrap.sh

# The demo sets up its own, smaller .venv (bootstrap.sh demo) as its timed step 0; a later
# `make setup` or `make test` adds the rest.
demo:
	bash scripts/demo.sh

# .venv-areal holds the real AReaL next to this repository; tests/parity runs there only
# (the main suite does not collect it: see tests/conftest.py).
setup-areal:
	bash scripts/areal_env.sh

# .venv-camel holds CAMEL-AI (it pins an older pydantic); tests/camel runs there only.
setup-camel:
	bash scripts/camel_env.sh

# The three virtualenvs side by side (scripts/setup_envs.sh): what `make test` sets up, .venv
# first.
setup-envs:
	bash scripts/setup_envs.sh

# The suites run on every core (pytest-xdist); a module with a module-scoped fixture stays on one
# worker (tests/conftest.py). JOBS=1 runs them in one worker (in `make test`, the suites beside
# the main suite always run in one worker each).
JOBS ?= auto
XDIST = -n $(JOBS) --dist loadgroup

# Each step prints its time ([time] lines), the main suite its ten slowest tests. The main
# suite starts once .venv is set up; beside it, .venv-areal and .venv-camel are built and AReaL's
# own tests, the parity suite and camel's run one after another, one worker each
# (scripts/other_suites.sh); their output is printed when the main suite ends.
TIMED = bash scripts/timed.sh
test:
	$(TIMED) "set-up (.venv)" bash scripts/bootstrap.sh
	$(TIMED) "chromium" bash scripts/install_chromium.sh
	$(TIMED) "all suites" bash scripts/beside.sh "AReaL's own tests, parity, camel" \
	  "bash scripts/other_suites.sh" \
	  $(TIMED) "main suite" .venv/bin/python -m pytest -q -p no:cacheprovider $(XDIST) --durations=10

# The contributor's loop: the main suite without the tests marked slow (real models, agent CLIs,
# the every-variant loop) or browser (Chromium); `make test` runs them all before a merge.
test-fast: setup
	.venv/bin/python -m pytest -q -p no:cacheprovider $(XDIST) -m "not slow and not browser"

parity: setup-areal
	.venv-areal/bin/python -m pytest -q -p no:cacheprovider $(XDIST) tests/parity

# AReaL's own test files, renamed to areal_runtime, against what passes on real AReaL.
areal-tests: setup
	.venv/bin/python scripts/areal_tests.py --jobs $(JOBS)

CAMEL_TESTS = .venv-camel/bin/python -m pytest -q -p no:cacheprovider tests/camel
camel: setup-camel
	$(CAMEL_TESTS)

lint: setup
	.venv/bin/ruff check . && .venv/bin/ruff format --check . && .venv/bin/areal-lint --exclude eval_files,stall_corpus .

# The hostile-input suite with many more random examples than `make test` runs (tests/fuzz).
fuzz: setup
	AREAL_FUZZ_PROFILE=fuzz .venv/bin/python -m pytest -q -p no:cacheprovider tests/fuzz
