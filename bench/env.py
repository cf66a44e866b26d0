"""The environment a measurement was taken in, recorded next to every result.

A number without its GPU, clocks and software versions cannot be compared with anything.
The SM clock is read before and after a run: an H100 that throttles (power, heat) runs
the later kernels of a sweep slower, and a drop between the two readings says so.
No hostname or user name is recorded: result files are committed to the repository.
"""
from __future__ import annotations

import datetime
import platform
import os
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def git_sha() -> str:
    """The commit the code was at, with "+dirty" if tracked files were modified.

    A copy of the tree without its .git folder (a lent GPU machine) can be told the commit
    with CVT_GIT_SHA; otherwise the result says "unknown"."""
    if os.environ.get("CVT_GIT_SHA"):
        return os.environ["CVT_GIT_SHA"]
    if not (ROOT / ".git").exists():      # an installed copy: its version says what it is
        return "unknown"
    try:
        sha = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=ROOT,
                             capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"],
                               cwd=ROOT, capture_output=True, text=True, timeout=10).stdout
        return (sha or "unknown") + ("+dirty" if dirty.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def suite_version() -> str | None:
    """The version of cuda-vs-triton: pyproject.toml's in a checkout, the installed
    distribution's otherwise."""
    pyproject = ROOT / "pyproject.toml"
    if pyproject.exists():
        import re

        found = re.search(r'^version\s*=\s*"([^"]+)"', pyproject.read_text(), re.M)
        if found:
            return found.group(1)
    try:
        from importlib.metadata import version

        return version("cuda-vs-triton")
    except Exception:       # PackageNotFoundError: neither a checkout nor installed
        return None


def _nvml():
    """The pynvml module, initialised, or None (not installed, no driver)."""
    try:
        import pynvml

        pynvml.nvmlInit()
        return pynvml
    except Exception:  # ImportError, or NVMLError without a driver
        return None


def sm_clock_mhz(index: int = 0) -> int | None:
    """The current SM clock of GPU `index` in MHz (pynvml), or None if it cannot be read."""
    nv = _nvml()
    if nv is None:
        return None
    try:
        handle = nv.nvmlDeviceGetHandleByIndex(index)
        return int(nv.nvmlDeviceGetClockInfo(handle, nv.NVML_CLOCK_SM))
    except Exception:
        return None


def _gpu_facts(index: int = 0) -> dict:
    import torch

    props = torch.cuda.get_device_properties(index)
    facts = {
        "gpu": props.name,
        "sm_count": props.multi_processor_count,
        "compute_capability": f"{props.major}.{props.minor}",
        "memory_gib": round(props.total_memory / 2**30, 1),
        "l2_cache_bytes": int(getattr(props, "L2_cache_size", 0) or 0) or None,
        "cuda_runtime": torch.version.cuda,
    }
    nv = _nvml()
    if nv is not None:
        try:
            handle = nv.nvmlDeviceGetHandleByIndex(index)
            driver = nv.nvmlSystemGetDriverVersion()
            facts["driver"] = driver.decode() if isinstance(driver, bytes) else driver
            facts["sm_clock_max_mhz"] = int(nv.nvmlDeviceGetMaxClockInfo(handle,
                                                                         nv.NVML_CLOCK_SM))
            facts["mem_clock_max_mhz"] = int(nv.nvmlDeviceGetMaxClockInfo(handle,
                                                                          nv.NVML_CLOCK_MEM))
            facts["power_limit_w"] = round(nv.nvmlDeviceGetPowerManagementLimit(handle) / 1000)
        except Exception:
            pass
    if "driver" not in facts:
        try:
            out = subprocess.run(["nvidia-smi", "--query-gpu=driver_version",
                                  "--format=csv,noheader"], capture_output=True, text=True,
                                 timeout=20).stdout.strip().splitlines()
            facts["driver"] = out[0] if out else None
        except (OSError, subprocess.SubprocessError):
            facts["driver"] = None
    return facts


def _version(module: str) -> str | None:
    try:
        return __import__(module).__version__
    except Exception:
        return None


def environment(device: str) -> dict:
    """Everything a reader needs to reproduce or compare a result (no host names)."""
    env = {
        "date_utc": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "device": device,
        "version": suite_version(),
        "git_sha": git_sha(),
        "python": platform.python_version(),
        "torch": _version("torch"),
        "triton": _version("triton"),
        "numpy": _version("numpy"),
    }
    if device == "cuda":
        env.update(_gpu_facts())
        env["sm_clock_mhz_before"] = sm_clock_mhz()
    else:
        env["gpu"] = None
        env["note"] = "no GPU: Triton ran through its interpreter; no timings or counters"
    return env


def finish(env: dict) -> dict:
    """Adds the SM clock after the run (call when the measurements are done)."""
    if env.get("device") == "cuda":
        env["sm_clock_mhz_after"] = sm_clock_mhz()
    return env
