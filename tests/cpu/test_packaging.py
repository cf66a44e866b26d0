"""CPU tier: the suite installs as a package and runs outside the repository; it builds for
the GPU that is there; kernels a GPU cannot run are skipped with their reason.

    pip install .          offline: build_backend.py needs no build dependencies
    cvt-bench ...          the console command beside `python -m bench`
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """`pip install --no-deps --no-index --target DIR .`: an isolated build with no index
    to download from, as on a GPU machine without a network."""
    target = tmp_path_factory.mktemp("site")
    done = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps",
                           "--no-index", "--target", str(target), str(ROOT)],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    return target


def _run_outside(target: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    # CVT_GIT_SHA labels the checkout a GPU run measures, not an installed copy
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "CVT_GIT_SHA")}
    env["PYTHONPATH"] = str(target)
    return subprocess.run([sys.executable, *args], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=300)


def test_pip_install_offline_holds_the_packages_and_the_cuda_sources(installed):
    for package in ("bench", "bindings", "triton_impl"):
        assert (installed / package / "__init__.py").exists(), package
    assert (installed / "bench" / "families" / "matmul" / "models.py").exists()
    # the CUDA sources travel inside the bindings package (`cuda` is NVIDIA's namespace)
    for name in ("matmul_config.h", "memory_config.h", "matmul_v3_smem_tiling.cu"):
        assert (installed / "bindings" / "cuda" / name).exists(), name
    assert (installed / "bindings" / "matmul_ops.cpp").exists()
    assert not (installed / "cuda").exists()
    dist = next(installed.glob("cuda_vs_triton-*.dist-info"))
    assert "cvt-bench = bench.cli:main" in (dist / "entry_points.txt").read_text()
    assert (dist / "LICENSE").exists()


def test_the_installed_copy_runs_outside_the_repository(installed, tmp_path):
    """What failed before with FileNotFoundError: .../site-packages/cuda/matmul_config.h."""
    done = _run_outside(installed, tmp_path, "-m", "bench", "model", "--kernels", "cuda_v3*",
                        "--shape", "64x64x64")
    assert done.returncode == 0, done.stderr
    assert "cuda_v3_smem_tiling" in done.stdout and "global loads" in done.stdout
    where = _run_outside(installed, tmp_path, "-c",
                         "import bench, bindings.config as c; print(bench.__file__); "
                         "print(c.CUDA_DIR)")
    assert str(installed) in where.stdout and str(ROOT) not in where.stdout
    assert where.stdout.strip().endswith(str(installed / "bindings" / "cuda"))


def test_the_installed_copy_starts_and_grades_a_lab(installed, tmp_path, monkeypatch):
    """A teaching assistant's path, outside the repository: `lab start`, then `grade` of the
    starter (0) and of the solutions the installed copy holds (full marks; the CUDA one on
    the installed emulator), results.json."""
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")   # graded on the CPU here, GPU or not
    started = _run_outside(installed, tmp_path, "-m", "bench", "lab", "start", "1", "mine")
    assert started.returncode == 0, started.stderr
    starter = _run_outside(installed, tmp_path, "-m", "bench", "grade", "1", "mine/starter.py")
    assert starter.returncode == 1 and ": 0/10" in starter.stdout, starter.stdout + starter.stderr
    solution = installed / "bench" / "labs" / "01_vector_add" / "instructor" / "solution.py"
    done = _run_outside(installed, tmp_path, "-m", "bench", "grade", "1", str(solution),
                        "--out", "graded")
    assert done.returncode == 0 and ": 10/10" in done.stdout, done.stdout + done.stderr
    assert (tmp_path / "graded" / "results.json").is_file()
    cuda = _run_outside(installed, tmp_path, "-m", "bench", "grade", "1",
                        str(solution.with_suffix(".cu")))
    assert cuda.returncode == 0 and ": 9/9" in cuda.stdout, cuda.stdout + cuda.stderr


def test_the_installed_copy_records_its_version(installed, tmp_path):
    done = _run_outside(installed, tmp_path, "-c",
                        "from bench import env; e = env.environment('cpu'); "
                        "print(e['version'], e['git_sha'])")
    assert done.returncode == 0, done.stderr
    version = re.search(r'^version = "(.+)"$', (ROOT / "pyproject.toml").read_text(),
                        re.M).group(1)
    assert done.stdout.split() == [version, "unknown"]


def test_wheel_metadata(tmp_path):
    sys.path.insert(0, str(ROOT))
    try:
        import build_backend
    finally:
        sys.path.remove(str(ROOT))
    name = build_backend.build_wheel(str(tmp_path))
    # Where this Python's torch has CUDA and nvcc is found (a GPU machine, no isolation),
    # the wheel carries the built ops and is tagged for this platform; else pure Python.
    builds_ops = build_backend._torch_with_cuda() is None
    assert name.endswith("-py3-none-any.whl") != builds_ops, name
    with zipfile.ZipFile(tmp_path / name) as z:
        names = z.namelist()
        meta = z.read(next(n for n in names if n.endswith("METADATA"))).decode()
        record = z.read(next(n for n in names if n.endswith("RECORD"))).decode()
    assert "Name: cuda-vs-triton" in meta and "License: MIT" in meta
    assert "Requires-Dist: torch" in meta and "Requires-Dist: pytest; extra == 'test'" in meta
    assert not any("__pycache__" in n or n.startswith("tests/") for n in names)
    assert all(n in record for n in names)
    assert any(n.endswith(".so") for n in names) == builds_ops


def test_editable_wheel_points_at_the_checkout(tmp_path):
    sys.path.insert(0, str(ROOT))
    try:
        import build_backend
    finally:
        sys.path.remove(str(ROOT))
    name = build_backend.build_editable(str(tmp_path))
    with zipfile.ZipFile(tmp_path / name) as z:
        assert z.read("cuda_vs_triton.pth").decode().strip() == str(ROOT)


# --- which GPUs the CUDA ops are built for -------------------------------------------

def test_arch_list_follows_the_machine(monkeypatch):
    from bindings import _toolchain as tc

    monkeypatch.delenv("TORCH_CUDA_ARCH_LIST", raising=False)
    monkeypatch.setattr(tc, "local_arch_list", lambda: "8.6")
    assert tc.arch_list() == ("8.6", "the GPUs of this machine")
    monkeypatch.setattr(tc, "local_arch_list", lambda: None)
    assert tc.arch_list()[0] == tc.DEFAULT_ARCH_LIST
    monkeypatch.setenv("TORCH_CUDA_ARCH_LIST", "9.0")
    assert tc.arch_list() == ("9.0", "TORCH_CUDA_ARCH_LIST")


@pytest.mark.parametrize("built_for, capability, runs", [
    ("9.0", (9, 0), True), ("9.0", (8, 0), False), ("8.0", (8, 6), True),
    ("8.6", (8, 0), False), ("8.0;9.0+PTX", (8, 9), True), ("8.6+PTX", (9, 0), True),
    ("9.0a", (9, 0), True), ("9.0a", (10, 0), False), ("8.0;8.6;8.9;9.0+PTX", (12, 0), True),
])
def test_a_build_runs_where_its_code_or_ptx_does(built_for, capability, runs):
    from bindings._toolchain import covers

    assert covers(built_for, capability) is runs


def test_default_arch_list_covers_every_supported_gpu():
    from bench.registry import ARCH_FLOOR
    from bindings._toolchain import ARCH_FLOOR as BUILD_FLOOR, DEFAULT_ARCH_LIST, covers

    assert ARCH_FLOOR == BUILD_FLOOR
    for capability in [(8, 0), (8, 6), (8, 7), (8, 9), (9, 0), (10, 0), (12, 0)]:
        assert covers(DEFAULT_ARCH_LIST, capability), capability


def test_prebuilt_extension_for_another_gpu_is_rebuilt(tmp_path, monkeypatch):
    import bindings

    library = tmp_path / "_C.cpython-311-x86_64-linux-gnu.so"
    library.write_bytes(b"")
    (tmp_path / "_C.arch").write_text("9.0\n")
    torch = pytest.importorskip("torch")
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda *a: (8, 0))
    why = bindings._other_gpu(str(library))
    assert why and "built for 9.0" in why and "sm_80" in why
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda *a: (9, 0))
    assert bindings._other_gpu(str(library)) is None


# --- kernels that need a newer GPU are skipped with their reason ----------------------

def test_hopper_only_kernels_say_so_and_the_rest_run_from_the_floor():
    from bench import device, registry

    for k in registry.kernels():
        assert k.min_capability >= registry.ARCH_FLOOR, k.name
        runs_on_a100, why = device.can_run(k, "cuda", capability=(8, 0))
        if k.min_capability > (8, 0):
            assert not runs_on_a100 and "sm_80" in why and k.needs in why, k.name
        else:
            assert runs_on_a100, k.name
        assert device.can_run(k, "cuda", capability=(9, 0))[0], k.name
    assert not device.can_run(registry.get("triton_persistent"), "cuda", capability=(8, 9))[0]


def test_sm90a_kernels_are_skipped_on_newer_gpus_too():
    """wgmma and TMA exist on compute capability 9.0 only: t2 and t3 say so on a Blackwell
    (10.0) or an RTX 50xx (12.0), where every kernel without a newest capability runs."""
    from bench import device, registry

    only_hopper = [k for k in registry.kernels() if k.max_capability is not None]
    assert {k.name for k in only_hopper} >= {"cuda_t2_wgmma_tma", "cuda_t3_warp_specialized"}
    for capability in ((10, 0), (12, 0)):
        for k in registry.kernels():
            runs, why = device.can_run(k, "cuda", capability=capability)
            if k in only_hopper:
                assert not runs and "runs on sm_90 only" in why and k.needs in why, (k.name, why)
                assert f"this GPU is sm_{capability[0]}{capability[1]}" in why
            else:
                assert runs, k.name


def test_the_time_plan_skips_what_this_gpu_cannot_run(monkeypatch):
    from bench import device, perf, registry

    monkeypatch.setattr(device, "gpu_capability", lambda: (8, 0))
    kernels = registry.select("triton_persistent,triton_grouped")
    work, skipped = perf.plan(kernels, "256x256x256", ["fp16"], registry.kernels())
    assert [k.name for k in skipped] == ["triton_persistent"]
    assert {k.name for _p, _s, k, _pr, _r in work} == {"triton_grouped", "cublas"}


@pytest.mark.parametrize("capability, lanes", [("8.0", 64), ("8.6", 128), ("8.9", 128),
                                               ("9.0", 128), ("7.5", 64), ("11.0", None)])
def test_nominal_fp32_peak_per_architecture(capability, lanes):
    from bench.families import matmul

    env = {"compute_capability": capability, "sm_count": 100, "sm_clock_max_mhz": 1000}
    peak = matmul.nominal_fp32_tflops(env)
    assert peak == (None if lanes is None else 100 * lanes * 2 * 1e9 / 1e12)


def test_gpu_tests_of_a_hopper_only_kernel_skip_on_older_gpus(monkeypatch):
    """tests/conftest.py skips a GPU test whose kernel parameter, or whose file's
    NEEDS_KERNEL, this GPU cannot run (capabilities faked)."""
    from types import SimpleNamespace

    from bench import device, registry
    from tests import conftest

    persistent = registry.get("triton_persistent")
    item = SimpleNamespace(callspec=SimpleNamespace(params={"kernel": persistent}),
                           module=SimpleNamespace())
    monkeypatch.setattr(device, "gpu_capability", lambda: (8, 0))
    assert "triton_persistent: needs sm_90" in conftest._kernel_cannot_run(item)
    by_file = SimpleNamespace(module=SimpleNamespace(NEEDS_KERNEL="triton_persistent"))
    assert conftest._kernel_cannot_run(by_file)
    grouped = SimpleNamespace(callspec=SimpleNamespace(params={"k": registry.get("triton_grouped")}),
                              module=SimpleNamespace())
    assert conftest._kernel_cannot_run(grouped) == ""
    monkeypatch.setattr(device, "gpu_capability", lambda: (9, 0))
    assert conftest._kernel_cannot_run(item) == ""
