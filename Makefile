# flashjudge: the two commands people need are `make run` and `make test`.
# Both set up what they need themselves: system packages (Debian), a virtualenv, the project in it.

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
SUITE  ?=
HOST   ?= 127.0.0.1
PORT   ?= 8000
APT_PACKAGES := bubblewrap chromium
# What mypy checks (config in pyproject.toml): every folder of the project's code and its tests,
# with no error.
TYPED  := app worker kernels testcases bench flashjudge flashjudge_cli docker tests

.PHONY: run test venv system-deps test-slurm test-idp lint typecheck bench bwrap-bundle clean

# A machine with an NVIDIA GPU gets CuPy and NVML too (scripts/gpu-extra.sh: ",gpu" or ",gpu13").
GPU_EXTRA := $(shell scripts/gpu-extra.sh)
comma     := ,
INSTALLED := $(VENV)/.installed-dev$(subst $(comma),-,$(GPU_EXTRA))

$(INSTALLED): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev$(GPU_EXTRA)]'
	touch $@

venv: $(INSTALLED)

# bubblewrap sandboxes every build and run; chromium drives the browser tests.
system-deps:
	@missing=""; \
	command -v bwrap >/dev/null || missing="$$missing bubblewrap"; \
	command -v chromium >/dev/null || missing="$$missing chromium"; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO=sudo; fi; \
	  $$SUDO apt-get update -qq && $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi

# Debian's Slurm and munge for the Slurm tests, which start their own cluster (tests/slurm/).
# Optional: where apt-get is missing or fails, say so and go on; those tests then skip.
test-slurm:
	@missing=""; \
	command -v munged >/dev/null || [ -x /usr/sbin/munged ] || missing="$$missing munge"; \
	command -v slurmctld >/dev/null || [ -x /usr/sbin/slurmctld ] || missing="$$missing slurmctld"; \
	command -v slurmd >/dev/null || [ -x /usr/sbin/slurmd ] || missing="$$missing slurmd"; \
	command -v sbatch >/dev/null || missing="$$missing slurm-client"; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  if [ "$$(id -u)" = 0 ]; then SUDO=""; else SUDO=sudo; fi; \
	  { command -v apt-get >/dev/null && $$SUDO apt-get update -qq && \
	    DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq --no-install-recommends \
	      $$missing >/dev/null; } \
	  || echo "could not install$$missing: the Slurm tests will be skipped"; \
	fi

# The OpenID provider the sign-in tests run (tests/oidc/: panva's oidc-provider, from its lock
# file); Node.js must be there, as on the CI machines (the tests skip without it).
IDP_MODULES := tests/oidc/node_modules/.package-lock.json
$(IDP_MODULES): tests/oidc/package-lock.json
	npm ci --prefix tests/oidc --no-audit --no-fund --loglevel=error

test-idp:
	@if command -v npm >/dev/null; then $(MAKE) --no-print-directory $(IDP_MODULES); \
	else echo "no npm: the OpenID sign-in tests will be skipped"; fi

run: system-deps venv
	$(BIN)/flashjudge serve --host $(HOST) --port $(PORT) $(if $(SUITE),--suite $(SUITE))

test: system-deps venv test-slurm test-idp
	$(BIN)/ruff check .
	$(MAKE) --no-print-directory typecheck
	$(BIN)/python -m pytest -q

lint: venv
	$(BIN)/ruff check .

# incremental: the cache under .mypy_cache makes a second run take a few seconds
typecheck: venv
	$(BIN)/mypy $(TYPED)

bench: venv
	$(BIN)/python bench/compare_throughput.py
	$(BIN)/python bench/sandbox_startup.py
	$(BIN)/python bench/judge_overhead.py tests/hostile/correct-seq/hw4.c --suite hw4-mini

# Debian's bubblewrap (+ setpriv) in .bwrap/, to carry to GPU nodes that have none (FLASHJUDGE_BWRAP)
bwrap-bundle:
	scripts/bwrap-bundle.sh

clean:
	rm -rf $(VENV) build *.egg-info
