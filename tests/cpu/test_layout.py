"""CPU tier: the op list, the kernel files, the registry and the README agree, and the
parts that must work without a GPU say so clearly."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

import bindings
from bench import registry

ROOT = Path(__file__).resolve().parents[2]


def test_op_list_matches_schemas_and_kernel_files():
    """The ladder is CVT_MATMUL_OPS (cuda/matmul_config.h): bindings/matmul_ops.cpp defines
    its schemas by expanding that list, none by hand, and every op has its kernel file.
    (tests/cpu/test_cuda_config.py checks that MATMUL_OPS is what the preprocessor expands.)"""
    text = (ROOT / "bindings" / "matmul_ops.cpp").read_text()
    assert "CVT_MATMUL_OPS(CVT_MATMUL_SCHEMA)" in text
    assert not re.findall(r'm\.def\("(\w+)\(', text), "a schema written out by hand"
    assert "CVT_TENSOR_CORE_OPS(CVT_MATMUL_SCHEMA)" in text
    assert "CVT_TF32_OPS(CVT_MATMUL_SCHEMA)" in text
    assert "CVT_SKINNY_OPS(CVT_MATMUL_SCHEMA)" in text
    files = sorted(p.stem for p in (ROOT / "cuda").glob("matmul_*.cu"))
    assert sorted([*bindings.MATMUL_OPS, *bindings.TENSOR_CORE_OPS, *bindings.TF32_OPS,
                   *bindings.SKINNY_OPS]) == files


def test_registry_covers_every_cuda_op_once():
    cuda = [k for k in registry.kernels() if k.backend == "cuda" and k.op == "matmul"
            and k.chooses is None]        # cuda_auto runs the others (bindings/auto.py)
    # the paths of CVT_SKINNY_OPS take only some shapes: cuda_auto runs them, not the registry
    assert sorted(Path(k.source).stem for k in cuda) == sorted(
        [*bindings.MATMUL_OPS, *bindings.TENSOR_CORE_OPS, *bindings.TF32_OPS])
    for k in cuda:
        assert (ROOT / k.source).exists(), k.source


def test_registry_records_are_complete():
    for k in registry.kernels():
        assert k.backend in registry.BACKENDS, k.name
        assert set(k.precisions) <= set(registry.PRECISIONS), k.name
        assert (ROOT / k.source).exists(), f"{k.name}: missing source {k.source}"
        assert k.summary and len(k.summary) < 120, k.name
        if k.twin is not None:
            assert registry.get(k.twin).twin == k.name, f"{k.name} <-> {k.twin} not mutual"


def test_cuda_tile_params_come_from_the_header():
    from bindings import config

    p = config.params()
    assert registry.get("cuda_v3_smem_tiling").params() == {
        "L": p["V3_L"], "S": p["V3_S"], "V": p["V3_V"]}
    assert p["V3_L"] % p["V3_V"] == 0


def test_every_kernel_is_one_link_from_the_readme():
    """README.md links the registry's list (docs/api.md, a block `bench docs` writes), and
    that list names every kernel: the front door grows by no word with a new kernel."""
    assert "(docs/api.md#every-kernel)" in (ROOT / "README.md").read_text()
    from bench import kernels

    api = (ROOT / "docs" / "api.md").read_text()
    # as functions of bench.kernels (cuda_v1.5_thread_tiling is cuda_v1_5_thread_tiling)
    missing = [name for name in kernels.names() if f"`{name}`" not in api]
    assert not missing, f"docs/api.md does not name {missing}"


def test_importing_packages_does_nothing():
    """Modules do nothing at import: no build, no Triton, no CUDA initialisation."""
    code = ("import sys, bench, bench.registry, bench.cli, bindings;"
            "assert 'triton' not in sys.modules, 'triton imported';"
            "print('ok')")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_cpu_torch_gives_one_clear_error():
    import torch

    if torch.version.cuda is not None:
        pytest.skip("this torch has CUDA")
    with pytest.raises(bindings.CudaOpsUnavailable, match="CUDA build of PyTorch"):
        bindings.ops()


def test_setup_py_says_why_the_extension_is_skipped(tmp_path):
    import torch

    if torch.version.cuda is not None:
        pytest.skip("this torch has CUDA: setup.py builds the extension")
    out = subprocess.run([sys.executable, "setup.py", "--name"], capture_output=True, text=True,
                         cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert "skipping the CUDA extension: torch" in out.stdout
    assert "CPU-only build" in out.stdout


def test_toolchain_probe_accepts_the_system_compiler():
    import shutil

    from bindings._toolchain import choose_cxx, shares_cxx_runtime

    if shutil.which("g++") is None:
        pytest.skip("no g++")
    assert shares_cxx_runtime("g++")
    cxx, note = choose_cxx()
    assert cxx is not None


def test_cpu_tier_refuses_numpy_that_breaks_the_interpreter(monkeypatch):
    """Without a GPU, numpy >= 2.4 would skip every interpreter test: stop with the reason."""
    from tests import conftest

    monkeypatch.setattr(conftest, "HAS_GPU", False)
    monkeypatch.setattr(conftest, "_numpy_too_new", lambda: True)
    monkeypatch.delenv("CVT_SKIP_INTERPRETER", raising=False)
    with pytest.raises(pytest.UsageError, match="numpy < 2.4"):
        conftest.pytest_configure(None)
    monkeypatch.setenv("CVT_SKIP_INTERPRETER", "1")
    conftest.pytest_configure(None)                  # skipping on purpose is allowed
