# The commands of the README, each doing its own setup on a fresh machine:
#
#   make report    the main job: check, time, profile and plot every kernel, write a report
#   make test      the fast tier of the tests: CPU tier everywhere, the interpreter tier
#                  without a GPU, the GPU tier where there is one; the `slow` tests left out
#   make test-all  every test, the slow ones too: compute-sanitizer over every kernel,
#                  fuzzing, offsets past 2^31, every tuning candidate, the CPU emulators
#   make test-slow the slow tests alone (CI: after make test)
#   make docs      the numbers of README.md and docs/ from the result sets they name
#
# Both print the 25 slowest tests (--durations=25); PYTEST_ARGS adds pytest arguments.
#
# Python, chosen in this order and said in one line:
#  1. the system python3 when it has everything (torch, triton, pytest, pytest-timeout,
#     matplotlib; and, on a machine without a GPU, numpy < 2.4, which the Triton
#     interpreter needs);
#  2. a GPU machine whose system Python has a CUDA torch but lacks some of the rest: a .venv
#     that sees the system's packages (--system-site-packages, so its GPU torch is kept),
#     with only what is missing installed into it;
#  3. otherwise a CPU .venv made from requirements-cpu.txt (the CPU tier only).
# Where torch has CUDA, the extension is built in place first (setup.py, ninja), for the GPUs
# of this machine unless TORCH_CUDA_ARCH_LIST says otherwise.

SHELL := /bin/bash
SYSTEM_PYTHON ?= python3
VENV := .venv
PROBE := import sys, importlib.util as u; \
  missing = [m for m in ("torch", "triton", "pytest", "pytest_timeout", "matplotlib", "numpy", "hypothesis", "tqdm") if u.find_spec(m) is None]; \
  gpu = u.find_spec("torch") is not None and __import__("torch").cuda.is_available(); \
  numpy_ok = u.find_spec("numpy") is not None and tuple(map(int, __import__("numpy").__version__.split(".")[:2])) < (2, 4); \
  print("system" if not missing and (gpu or numpy_ok) else "gpu-venv" if gpu else "cpu-venv", " ".join(missing) or "-")
PYTHON_CHOICE := $(shell $(SYSTEM_PYTHON) -c '$(PROBE)' 2>/dev/null || echo "cpu-venv python3-not-usable")
CHOICE := $(word 1,$(PYTHON_CHOICE))
MISSING := $(wordlist 2,99,$(PYTHON_CHOICE))
PY := $(if $(filter system,$(CHOICE)),$(SYSTEM_PYTHON),$(VENV)/bin/python)
WHY_system := the system Python has torch, triton, pytest, pytest-timeout, hypothesis, tqdm and matplotlib
WHY_gpu-venv := the system Python has a GPU torch but lacks $(MISSING): a .venv on top of it (--system-site-packages) gets them
WHY_cpu-venv := no torch with a GPU in the system Python (it lacks: $(MISSING)), so a CPU .venv from requirements-cpu.txt: the CPU tier only, GPU tests and timings are skipped
$(info make: Python = $(PY): $(WHY_$(CHOICE)))
JOBS ?= $(shell nproc)
export MAX_JOBS ?= $(JOBS)
OUT ?= results/local
# `make report` replaces its own default folder; any other OUT holding a result set is
# refused (bench/results.py): pass REPORT_ARGS=--force to replace it.
REPORT_ARGS ?= $(if $(filter results/local,$(OUT)),--force,)
PYTEST_ARGS ?=

.PHONY: env build test test-all test-slow report docs clean

env: $(if $(filter system,$(CHOICE)),,$(VENV)/.installed-$(CHOICE))

$(VENV)/.installed-cpu-venv: requirements-cpu.txt
	$(SYSTEM_PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install -q --upgrade pip
	$(VENV)/bin/pip install -q -r requirements-cpu.txt
	touch $@

$(VENV)/.installed-gpu-venv:
	rm -rf $(VENV)
	$(SYSTEM_PYTHON) -m venv --system-site-packages $(VENV)
	@# a system Python that is itself a venv: --system-site-packages reaches its base, not it
	$(SYSTEM_PYTHON) -c 'import site; print("\n".join(site.getsitepackages()))' \
	  > $$($(VENV)/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/system-python.pth
	$(VENV)/bin/pip install -q $(filter-out torch triton,$(MISSING))
	touch $@

# Builds bindings/_C*.so where torch has CUDA; says why not elsewhere.
build: env
	@if $(PY) -c "import torch, sys; sys.exit(torch.version.cuda is None)"; then \
	  $(PY) setup.py -q build_ext --inplace; \
	else \
	  echo "make build: torch has no CUDA here; the CUDA ops are skipped (CPU tier only)"; \
	fi

# The fast tier and everything (the `slow` marker: pytest.ini, tests/conftest.py).
PYTEST := $(PY) -m pytest -n $(JOBS) --dist loadgroup --durations=25

test: build
	$(PYTEST) -m "not slow" $(PYTEST_ARGS)

test-all: build
	$(PYTEST) $(PYTEST_ARGS)

# The slow tests alone (CI runs them after `make test`: the CPU emulators of the CUDA
# kernels and the compiled-code checks are the CPU machine's only run of those kernels).
test-slow: build
	$(PYTEST) -m slow $(PYTEST_ARGS)

report: build
	$(PY) -m bench report --out $(OUT) $(REPORT_ARGS)

# The numbers of README.md and docs/ from the committed result sets they name
# (bench/doc_blocks.py); no GPU needed.
docs: env
	$(PY) -m bench docs

clean:
	rm -rf build bindings/_C*.so results/local
