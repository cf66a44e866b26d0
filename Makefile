# The two commands of the README, each doing its own setup on a fresh machine:
#
#   make report    the main job: check, time, profile and plot every kernel, write a report
#   make test      the tests: CPU tier everywhere, GPU tier where there is a GPU
#
# Python: the system python3 when it already has torch and triton (a GPU machine with
# torch preinstalled and no network), otherwise a .venv made from requirements-cpu.txt.
# Where torch has CUDA, the extension is built in place first (setup.py, ninja, sm_90).

SHELL := /bin/bash
SYSTEM_PYTHON ?= python3
VENV := .venv
# The system Python is used when it has everything; on a machine without a GPU it also
# needs numpy < 2.4 (the Triton interpreter, the CPU tier's only test of the Triton kernels).
HAVE_SYSTEM_TORCH := $(shell $(SYSTEM_PYTHON) -c "import torch, triton, pytest, matplotlib, \
  numpy, sys; old = tuple(map(int, numpy.__version__.split('.')[:2])) < (2, 4); \
  sys.exit(not (torch.cuda.is_available() or old))" >/dev/null 2>&1 && echo yes)
PY := $(if $(HAVE_SYSTEM_TORCH),$(SYSTEM_PYTHON),$(VENV)/bin/python)
WHY_SYSTEM := the system Python has torch, triton, pytest and matplotlib
WHY_VENV := a .venv from requirements-cpu.txt: the system Python lacks torch, triton, pytest or matplotlib, or has numpy >= 2.4 without a GPU
$(info make: using $(PY) ($(if $(HAVE_SYSTEM_TORCH),$(WHY_SYSTEM),$(WHY_VENV))))
JOBS ?= $(shell nproc)
export TORCH_CUDA_ARCH_LIST ?= 9.0
export MAX_JOBS ?= $(JOBS)
OUT ?= results/local
# `make report` replaces its own default folder; any other OUT holding a result set is
# refused (bench/results.py): pass REPORT_ARGS=--force to replace it.
REPORT_ARGS ?= $(if $(filter results/local,$(OUT)),--force,)
PYTEST_ARGS ?=

.PHONY: env build test report clean

env: $(if $(HAVE_SYSTEM_TORCH),,$(VENV)/.installed)

$(VENV)/.installed: requirements-cpu.txt
	$(SYSTEM_PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -r requirements-cpu.txt
	touch $@

# Builds bindings/_C*.so where torch has CUDA; says why not elsewhere.
build: env
	@if $(PY) -c "import torch, sys; sys.exit(torch.version.cuda is None)"; then \
	  $(PY) setup.py -q build_ext --inplace; \
	else \
	  echo "make build: torch has no CUDA here; the CUDA ops are skipped (CPU tier only)"; \
	fi

test: build
	$(PY) -m pytest -n $(JOBS) --dist loadgroup $(PYTEST_ARGS)

report: build
	$(PY) -m bench report --out $(OUT) $(REPORT_ARGS)

clean:
	rm -rf build bindings/_C*.so results/local
