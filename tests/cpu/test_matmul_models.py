"""The closed-form traffic models: the lecture's formulas at tile multiples, exact counts at
awkward shapes, bytes = elements x element size. CPU only, no kernel runs."""
from __future__ import annotations

import pytest

from bench import model_table, problems, registry
from bench.families.matmul import models
from bindings import precision as prec
from bench.families.matmul.models import MatmulShape

LADDER = [k for k in registry.kernels() if k.backend == "cuda" and k.op == "matmul"
          and k.model is not None]
SQUARE = [256, 512, 1024, 4096]   # multiples of every rung's block tile (v6: 128 x 256)


@pytest.mark.parametrize("kernel", LADDER, ids=lambda k: k.name)
@pytest.mark.parametrize("n", SQUARE)
def test_model_equals_lecture_formula_at_tile_multiples(kernel, n):
    p = kernel.params()
    t = kernel.traffic(MatmulShape(n, n, n))
    assert t.global_loads == models.lecture_formula(kernel.version, n, p)
    assert t.fma == n**3  # no padding at tile multiples
    assert t.global_stores == n * n


def test_v3_shared_loads_follow_lecture():
    k = registry.get("cuda_v3_smem_tiling")
    p = k.params()
    n = 1024
    assert k.traffic(MatmulShape(n, n, n)).shared_loads == 2 * n**3 // p["V"]


@pytest.mark.parametrize("kernel", LADDER, ids=lambda k: k.name)
@pytest.mark.parametrize("shape", [(0, 5, 7), (5, 0, 7), (5, 7, 0), (1, 1, 1), (1, 17, 1),
                                   (13, 1, 29), (97, 89, 83), (131, 127, 7)])
def test_edge_shapes(kernel, shape):
    s = MatmulShape(*shape)
    t = kernel.traffic(s)
    M, N, K = shape
    for value in (t.global_loads, t.global_stores, t.shared_loads, t.fma):
        assert isinstance(value, int) and value >= 0
    if 0 in (M, N, K):
        assert t.global_loads == 0 and t.fma == 0
    if M and N and K:
        # every thread-issued count is at least each input once, at most v1's 2MNK
        assert M * K + K * N <= t.global_loads <= 2 * M * N * K
        assert t.fma >= M * N * K
    assert t.global_stores == M * N
    assert t.useful_flops == 2 * M * N * K


@pytest.mark.parametrize("kernel", LADDER, ids=lambda k: k.name)
def test_bytes_are_elements_times_size(kernel):
    t = kernel.traffic(MatmulShape(97, 89, 83))
    e = 4 if kernel.precisions[0] in ("fp32", "tf32") else 2    # 16-bit rungs: fp16 first
    assert t.global_load_bytes == e * t.global_loads
    assert t.global_store_bytes == e * t.global_stores
    assert t.shared_load_bytes == e * t.shared_loads
    assert t.compulsory_bytes == e * (97 * 83 + 83 * 89 + 97 * 89)
    d = t.as_dict()
    assert d["compulsory_bytes"] == t.compulsory_bytes


def test_exact_counts_at_primes():
    """Hand-derived counts at a shape that is a multiple of no tile."""
    M, N, K = 97, 89, 83
    s = MatmulShape(M, N, K)
    fp32 = {"precision": "fp32"}
    assert models.matmul_v1(s, fp32).global_loads == 2 * M * N * K
    assert models.matmul_v1_5(s, {"V": 4, **fp32}).global_loads == M * K * 23 + M * N * K
    assert models.matmul_v2(s, {"V": 4, **fp32}).global_loads == M * K * 23 + N * K * 25
    v3 = models.matmul_v3(s, {"L": 128, "S": 8, "V": 8, **fp32})
    assert v3.global_loads == M * K + N * K  # one block covers the whole matrix
    assert v3.fma == 128 * 128 * 88          # padded block, k padded to 88


def test_model_table_rows_carry_params_and_lecture():
    rows = model_table.rows(LADDER, "1024x1024x1024,100x90x80")
    assert len(rows) == 2 * len(LADDER)
    square = [r for r in rows if r["shape"] == "1024x1024x1024"]
    assert all(r["lecture_global_loads"] == r["global_loads"] for r in square)
    assert all(r["lecture_global_loads"] is None for r in rows if r["shape"] == "100x90x80")
    assert all(r["params"] != "-" for r in rows)


def test_problem_work_and_bytes():
    mm = problems.get("matmul")
    s = mm.parse_shape("3x5x7")
    assert mm.useful_flops(s) == 2 * 3 * 5 * 7
    assert mm.compulsory_bytes(s, "fp16") == 2 * (3 * 7 + 7 * 5 + 3 * 5)
    assert mm.output_nbytes(s, "bf16") == 3 * 5 * 2
    assert mm.size(mm.parse_shape("64x64x64")) == pytest.approx(64)
    with pytest.raises(ValueError):
        mm.parse_shape("3x5")
    with pytest.raises(KeyError):
        problems.get("no_such_op")
    for device in ("cpu", "cuda"):
        assert mm.parse_shapes(mm.check_shapes[device])
    assert mm.tolerance(s, "fp32") == 1      # errors are in units of their own bound


def test_every_model_takes_every_precision_of_its_kernel():
    """Kernel.traffic(shape, precision): the tiles the kernel runs at that precision, the
    bytes of that precision's elements."""
    for k in registry.kernels():
        if k.model is None:
            continue
        problem = problems.get(k.op)
        shape = problem.parse_shapes(problem.model_shapes or problem.time_shapes["cuda"])[0]
        for precision in k.precisions:
            t = k.traffic(shape, precision)
            assert t.elem_bytes == prec.element_bytes(precision), (k.name, precision)


def test_half_precision_bytes_are_half_at_the_same_tiles():
    k = registry.get("triton_grouped")
    s = MatmulShape(4096, 4096, 4096)
    tiles = {n: v for n, v in k.tile_params("fp16").items() if n != "precision"}
    fp32 = k.model(s, {**tiles, "precision": "fp32"})
    fp16 = k.model(s, {**tiles, "precision": "fp16"})
    assert fp16.global_loads == fp32.global_loads
    assert 2 * fp16.global_load_bytes == fp32.global_load_bytes
    # and the registry uses each precision's own tiles: fp16 runs BLOCK_K = 64, fp32 16
    assert k.tile_params("fp16")["BLOCK_K"] != k.tile_params("fp32")["BLOCK_K"]


def test_model_command_prints_the_precision(capsys):
    from bench import cli

    assert cli.main(["model", "--kernels", "triton_grouped", "--shape", "256x256x256",
                     "--precision", "fp32,fp16"]) == 0
    out = capsys.readouterr().out
    assert "256x256x256  fp32" in out and "256x256x256  fp16" in out
