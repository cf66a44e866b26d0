"""Interpreter tier: the traffic counted under the Triton interpreter (bench/counted.py) equals
the traffic models, element for element, at tile multiples and at ragged shapes; and a wrong
kernel's count departs from its model where its bug loses work.

The models count what the threads request with masked edges requesting nothing (the
lecture's "global loads"); the interpreter sees each tl.load and tl.store with its mask, so
the two must agree exactly wherever the model describes the tile that runs. Where the
interpreter runs another configuration than the GPU (triton_split_k's and
triton_persistent's small interpreter tiles), the model is evaluated at the interpreter's
tile. triton_autotuned is left out: its tile is the one its autotuner picks at each shape.
"""
from __future__ import annotations

import pytest

from bench import counted, problems, registry
from bench.families.matmul import models_triton
from bench.families.matmul.models import MatmulShape

MATMUL = problems.get("matmul")
SHAPES = [MatmulShape(64, 64, 64), MatmulShape(67, 45, 31), MatmulShape(130, 70, 200)]
# the Triton twins of the lecture's ladder, and the blocked kernels the lecture builds on
LADDER = [k for k in registry.kernels() if k.backend == "triton" and k.op == "matmul"
          and k.version in ("v1", "v1.5", "v2", "v3", "grouped", "batched")]


@pytest.mark.parametrize("kernel", LADDER, ids=lambda k: k.name)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
def test_counted_matmul_traffic_is_the_model(kernel, shape):
    c = counted.count_kernel(kernel, MATMUL, shape, "fp32")
    t = kernel.traffic(shape, "fp32")
    assert len(c.launches) == 1
    assert c.loads == t.global_loads
    assert c.stores == t.global_stores == shape.M * shape.N
    assert (c.load_bytes, c.store_bytes) == (4 * t.global_loads, 4 * shape.M * shape.N)
    assert c.atomics == 0


def test_the_interpreters_tiles_are_counted_as_their_models_say():
    """triton_split_k and triton_persistent run small tiles under the interpreter: the
    blocked count at those tiles is what the interpreter counts (the first launch, the
    product; split_k's sum of partial tiles, where it splits, is a launch of its own)."""
    from triton_impl import tiles, tiles_hopper

    for shape in SHAPES:
        for precision in ("fp32", "fp16"):
            c = counted.count_kernel(registry.get("triton_split_k"), MATMUL, shape, precision)
            tile = tiles.split_k(precision, shape.M, shape.N, interpreting=True)
            model = models_triton.matmul_blocked(shape, {**tile, "precision": precision})
            assert c.launches[0].loads == model.global_loads, (shape, precision)
        c = counted.count_kernel(registry.get("triton_persistent"), MATMUL, shape, "fp16")
        cfg = tiles_hopper.PERSISTENT_INTERPRETER_CONFIG["fp16"]
        model = models_triton.matmul_persistent(shape, {**cfg, "precision": "fp16"})
        assert (c.loads, c.stores) == (model.global_loads, shape.M * shape.N), shape
        assert c.load_bytes == 2 * model.global_loads


def test_the_partials_of_a_split_are_a_launch_of_their_own():
    from triton_impl import matmul_split_k

    a, b = MATMUL.inputs(MatmulShape(40, 24, 96), "fp32", device="cpu")
    with counted.counting() as c:
        matmul_split_k._matmul(a, b, "fp32", splits=3)
    product, total = c.launches[0], c.launches[-1]
    assert len(c.launches) == 2 and product.kernel != total.kernel
    assert product.stores == 3 * 40 * 24            # three float partial tiles ...
    assert total.loads == 3 * 40 * 24 and total.stores == 40 * 24   # ... read once, summed


MEMORY = [k for k in registry.kernels() if k.backend == "triton" and k.op != "matmul"
          and k.model is not None and k.runs_on_cpu and "_bug_" not in k.name]


@pytest.mark.parametrize("kernel", MEMORY, ids=lambda k: k.name)
def test_counted_memory_traffic_is_the_model(kernel):
    problem = problems.get(kernel.op)
    precision = kernel.precisions[0]
    for text in problem.check_shapes["cpu"].split(",")[:3]:
        shape = problem.parse_shape(text)
        c = counted.count_kernel(kernel, problem, shape, precision)
        t = kernel.traffic(shape, precision)
        assert (c.loads, c.stores) == (t.global_loads, t.global_stores), (kernel.name, text)


def test_a_lost_k_tile_and_a_dropped_tail_show_in_the_count():
    """The count is a grade a kernel cannot argue with: the kernel that stops its k loop one
    tile early requests fewer loads than the model, the one that never stores its last
    partial column tile fewer stores."""
    shape = MatmulShape(64, 64, 64)
    drop_k = registry.get("triton_matmul_bug_drop_k_tile")
    assert counted.count_kernel(drop_k, MATMUL, shape, "fp32").loads < \
        drop_k.traffic(shape, "fp32").global_loads
    ragged = MatmulShape(67, 45, 31)
    drop_n = registry.get("triton_matmul_bug_drop_n_tail")
    assert counted.count_kernel(drop_n, MATMUL, ragged, "fp32").stores < ragged.M * ragged.N


def test_counting_needs_the_interpreter_and_leaves_it_as_it_was(monkeypatch):
    from triton.runtime import interpreter as interp

    before = (interp.GridExecutor.__call__, interp.InterpreterBuilder.create_masked_load,
              interp.InterpreterBuilder.create_masked_store)
    with counted.counting() as c:
        pass
    assert c.launches == [] and c.loads == 0
    assert before == (interp.GridExecutor.__call__, interp.InterpreterBuilder.create_masked_load,
                      interp.InterpreterBuilder.create_masked_store)
    monkeypatch.setenv("TRITON_INTERPRET", "0")
    with pytest.raises(RuntimeError, match="needs the Triton interpreter"):
        with counted.counting():
            pass


def test_bench_model_counted_sets_the_count_beside_the_model(capsys, tmp_path):
    """`bench model --counted`: the count in the table and in model.json, beside the model's
    loads; a CUDA kernel and a shape too large for the interpreter are said, not counted."""
    import json

    from bench import cli

    assert cli.main(["model", "--counted", "--kernels", "triton_v3*,cuda_v3*",
                     "--shapes", "67x45x31,4096x4096x4096", "--out", str(tmp_path / "m")]) == 0
    out = capsys.readouterr().out
    assert "counted" in out and "only Triton kernels run under the interpreter" in out
    assert "too large for the interpreter" in out
    rows = {(r["kernel"], r["shape"]): r
            for r in json.loads((tmp_path / "m" / "model.json").read_text())["rows"]}
    small = rows[("triton_v3_smem_tiling", "67x45x31")]
    assert small["counted_loads"] == small["global_loads"] == 3472
    assert small["counted_stores"] == 67 * 45 and small["counted_load_bytes"] == 4 * 3472
    assert "counted_loads" not in rows[("triton_v3_smem_tiling", "4096x4096x4096")]
    assert "counted_loads" not in rows[("cuda_v3_smem_tiling", "67x45x31")]
