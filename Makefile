# One-command set-up: every target creates/uses the project's venv and installs what it needs.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: venv test test-extended test-all test-core test-cluster lint demo docs docs-serve bench bench-quick bench-operator clean

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[dev]"
	touch $(STAMP)

venv: $(STAMP)

# The demo needs only flinkwin and PySpark (the `spark` extra), not the dev toolchain.
DEMO_STAMP := $(VENV)/.installed-demo
$(DEMO_STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e ".[spark]"
	touch $(DEMO_STAMP)

# Two lanes side by side: the lint and then the tests marked `beside` (those running their own
# long-lived processes: crash-test drivers, the job and user scripts, deployment drivers, notebook
# kernels, the docs site's browser; and a few long shared-session files that keep the two lanes
# even), and all the other tests (the core tests, then the Spark tests
# in one shared local session, whose JVM starts while the core tests run). Mostly waiting on JVM
# start-ups, the two overlap well on 2 cores; the lint rides in the shorter lane. Its log is
# printed when both are done; any failure (lint included) fails the target.
# `make test` leaves out the tests marked `extended` (more end-to-end scenarios of behaviours it
# checks already, and the long ones: the crash test, the notebooks, the plans' agreement...);
# `make test-extended` runs only those, `make test-all` both, and CI (.ci/run) runs both.
BESIDE_LOG := .test-beside.log
define two_lanes
	@command -v java >/dev/null || { echo "Java 17 is required for the Spark tests (apt-get install openjdk-17-jre-headless)"; exit 1; }
	@{ $(if $(2),$(PY) -m ruff check flinkwin tests bench && $(PY) -m mypy flinkwin; lint=$$?;,lint=0;) \
	  $(PY) -m pytest -q -rs -p no:cacheprovider -m "beside and not cluster and $(1)"; status=$$?; \
	  test $$status -eq 5 && status=0; test $$lint -eq 0 && test $$status -eq 0; } > $(BESIDE_LOG) 2>&1 & beside=$$!; \
	$(PY) -m pytest -q -rs -m "not cluster and not beside and $(1)"; rest=$$?; \
	test $$rest -eq 5 && rest=0; wait $$beside; status=$$?; \
	echo "== $(if $(2),the lint and )the tests run beside them (pytest -m 'beside and not cluster and $(1)'):"; \
	cat $(BESIDE_LOG); \
	test $$rest -eq 0 && test $$status -eq 0
endef

test: $(STAMP)
	@echo "make test: lint and about 2600 tests in two pytest processes, all but the extended tier (make test-extended; CI runs both)"
	$(call two_lanes,not extended,lint)

test-extended: $(STAMP)
	@echo "make test-extended: the extended end-to-end scenarios (pytest -m extended) in two pytest processes"
	$(call two_lanes,extended,)

test-all: test test-extended

# The standalone-cluster deployment test (a master and two workers on localhost, see
# docs/deployment.md); minutes on a quiet 2-core machine, so not part of `make test`.
test-cluster: $(STAMP)
	@command -v java >/dev/null || { echo "Java 17 is required (apt-get install openjdk-17-jre-headless)"; exit 1; }
	$(PY) -m pytest -q -m cluster tests/deploy

test-core: $(STAMP)
	$(PY) -m pytest -q tests/core

lint: $(STAMP)
	$(PY) -m ruff check flinkwin tests bench
	$(PY) -m mypy flinkwin

demo: $(DEMO_STAMP)
	@command -v java >/dev/null || { echo "Java 17 is required for Spark (apt-get install openjdk-17-jre-headless)"; exit 1; }
	$(PY) -m flinkwin.demo

# The documentation site (mkdocs.yml) into site/; `make test` builds it with --strict too
# (tests/docs, with its runnable examples, the migration table and a headless-Chromium check).
docs: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict

docs-serve: $(STAMP)
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs serve

# The benchmark suite (issue 11): every workload against native Spark, scaling runs, plots,
# written into docs/benchmarks.md. The full run takes about 1.5 hours on 2 cores.
bench: $(STAMP)
	$(PY) bench/bench_suite.py --write

bench-quick: $(STAMP)
	$(PY) bench/bench_suite.py --quick --write

bench-operator: $(STAMP)
	$(PY) bench/bench_operator.py
	$(PY) bench/bench_spark.py

clean:
	rm -rf $(VENV) build site *.egg-info .pytest_cache $(BESIDE_LOG)
