"""CPU tier: the memory-bound ops' shapes, traffic models, problems (references and errors that
can fail), the Philox reference, the registry records and the fake kernels. No kernel runs
here except PyTorch on the CPU."""
from __future__ import annotations

import math

import pytest
import torch

from bench.families.memory import models as mm
from bench import problems, registry
from bench.families.memory import problems as pm
from bench.families.matmul.models import MatmulShape
from bench.families.memory.models import TensorShape

FP32 = {"precision": "fp32"}   # the models take the precision (element size) in p

MEMORY_OPS = [p.name for p in pm.MEMORY_PROBLEMS]


# --------------------------------------------------------------------------- shapes

@pytest.mark.parametrize("text, dims, dim", [
    ("7919", (7919,), None), ("1000x1000", (1000, 1000), None),
    ("3000x3000:dim=0", (3000, 3000), 0), ("4x3x5:dim=1", (4, 3, 5), 1),
    ("4x3x5:dim=-1", (4, 3, 5), None), ("4x3x5:dim=-3", (4, 3, 5), 0)])
def test_tensor_shape_parses_and_prints(text, dims, dim):
    s = TensorShape.parse(text, allow_dim=True)
    assert s.dims == dims and s.dim == dim
    assert TensorShape.parse(str(s), allow_dim=True) == s


@pytest.mark.parametrize("text", ["", "x", "3x", "axb", "4x4:dim=2", "4x4:dims=0", "-4"])
def test_tensor_shape_rejects_nonsense(text):
    with pytest.raises(ValueError):
        TensorShape.parse(text, allow_dim=True)


def test_dim_suffix_only_where_allowed():
    with pytest.raises(ValueError, match="no ':dim='"):
        TensorShape.parse("4x4:dim=0")


def test_around_views_a_tensor_around_its_dim():
    assert TensorShape.parse("2x3x5", allow_dim=True).around() == (6, 5, 1)
    assert TensorShape.parse("2x3x5:dim=1", allow_dim=True).around() == (2, 3, 5)
    assert TensorShape.parse("2x3x5:dim=0", allow_dim=True).around() == (1, 2, 15)


def test_a_matmul_shape_is_a_3d_tensor_for_the_models():
    s = TensorShape.coerce(MatmulShape(64, 48, 40))
    assert s.dims == (64, 48, 40)


@pytest.mark.parametrize("problem", pm.MEMORY_PROBLEMS, ids=lambda p: p.name)
def test_every_default_shape_parses(problem):
    texts = [*problem.check_shapes.values(), *problem.time_shapes.values(), problem.model_shapes,
             problem.profile_shapes, problem.source_shapes, problem.target_shapes,
             problem.quick_time_shapes]
    for text in texts:
        for shape in problem.parse_shapes(text):
            c = problem.compulsory_bytes(shape, problem.precisions[0])
            assert (c > 0) if shape.numel else (c == 0), (shape, c)


def test_copy_check_shapes_are_longer_than_the_wrong_copies_block():
    from triton_impl import copy

    for text in problems.get("copy").check_shapes.values():
        assert max(s.numel for s in problems.get("copy").parse_shapes(text)) > copy.BUG_BLOCK


def test_target_shapes_are_at_least_256_mb():
    for op in ("vector_add", "copy", "relu_dropout", "softmax"):
        p = problems.get(op)
        for shape in p.parse_shapes(p.target_shapes):
            assert p.input_bytes(shape, "fp32") >= 256 * 2**20, (op, shape)


def test_source_shapes_are_those_of_the_documents():
    assert problems.get("vector_add").source_shapes == "192311"           # lecture, Figure 5
    assert problems.get("relu_dropout").source_shapes == "1000x1000"      # notebook
    soft = problems.get("softmax").parse_shapes(problems.get("softmax").source_shapes)
    assert {s.dims[0] for s in soft} == {100, 500, 1000, 2000, 3000}
    assert {s.dim for s in soft} == {0, None}                           # dim 0 and dim 1
    assert "3x150x225" in problems.get("rgb_to_grey").source_shapes        # guide, resized


# --------------------------------------------------------------------------- models

def test_models_count_bytes():
    n = TensorShape((1000, 1000))
    assert mm.vector_add(n, FP32).compulsory_bytes == 3 * 10**6 * 4
    assert mm.vector_add(n, {"precision": "fp16"}).model_bytes == 3 * 10**6 * 2
    assert mm.copy(n, FP32).model_bytes == mm.copy(n, FP32).compulsory_bytes == 8 * 10**6
    assert mm.relu_dropout(n, FP32).extra_factor == 1.0
    eager = mm.relu_dropout_eager(n, FP32)
    assert eager.model_bytes == 4 * 4 * 10**6 + 10**6          # two passes and a mask
    assert eager.compulsory_bytes == 8 * 10**6
    s = TensorShape((4096, 32768))
    assert mm.softmax_sram(s, FP32).extra_factor == 1.0
    assert mm.softmax_online(s, FP32).extra_factor == 1.5        # the second read
    assert mm.softmax_online(s, FP32).passes == 2
    staged = mm.softmax_sram(s, {"staged": True, **FP32})
    assert staged.shared_read_bytes == 2 * s.numel * 4 and staged.global_load_bytes == s.numel * 4
    img = TensorShape((3, 1066, 1600))
    assert mm.rgb_to_grey(img, FP32).compulsory_bytes == 4 * 1066 * 1600
    assert mm.rgb_to_grey(TensorShape((1066, 1600)), FP32) == mm.rgb_to_grey(img, FP32)


def test_online_softmax_reads_a_one_chunk_row_once():
    cuda = {"one_pass_n": 16384, "one_pass_n_unaligned": 4096, **FP32}
    triton = {"one_pass_n": {4: 16384, 2: 4096}, **FP32}
    assert mm.softmax_online(TensorShape((4096, 32768)), cuda).passes == 2
    assert mm.softmax_online(TensorShape((3000, 3000)), cuda).passes == 1
    assert mm.softmax_online(TensorShape((10, 5001)), cuda).passes == 2      # unaligned rows
    assert mm.softmax_online(TensorShape((3000, 3000), dim=0), cuda).passes == 2  # columns
    assert mm.softmax_online(TensorShape((8, 8192)), triton).passes == 1
    assert mm.softmax_online(TensorShape((8, 8192)), {**triton, "precision": "fp16"}).passes == 2
    k = registry.get("cuda_softmax_online")
    assert k.traffic(problems.get("softmax").parse_shape("100x100")).extra_factor == 1.0


def test_registered_one_pass_rows_follow_the_default_paths():
    """CUDA online: float32 steps of 16384 elements, 16-bit rows kept packed in steps of
    32768 (2048 unaligned); Triton online: rows up to 32768 are one chunk in every type.
    CUDA row_sram: 16-bit rows kept in shared memory in their own type, columns as float32."""
    softmax = problems.get("softmax")
    s = softmax.parse_shape("4096x32768")
    cuda, triton = registry.get("cuda_softmax_online"), registry.get("triton_softmax_online")
    assert softmax.traffic(cuda, s, "fp32").passes == 2
    for precision in ("fp16", "bf16"):
        assert softmax.traffic(cuda, s, precision).passes == 1
        assert softmax.traffic(cuda, softmax.parse_shape("10x2047"), precision).passes == 1
        assert softmax.traffic(cuda, softmax.parse_shape("10x2049"), precision).passes == 2
    for precision in ("fp32", "fp16", "bf16"):
        assert softmax.traffic(triton, s, precision).passes == 1
    assert softmax.traffic(triton, softmax.parse_shape("4x40000"), "fp16").passes == 2
    sram = registry.get("cuda_softmax_row_sram")
    assert softmax.traffic(sram, s, "fp16").shared_read_bytes == 2 * s.numel * 2
    assert softmax.traffic(sram, s, "fp32").shared_read_bytes == 2 * s.numel * 4
    cols = softmax.parse_shape("300x300:dim=0")
    assert softmax.traffic(sram, cols, "fp16").shared_read_bytes == 2 * cols.numel * 4


def test_model_rows_have_the_harness_columns():
    d = mm.softmax_online(TensorShape((8, 100)), FP32).as_dict()
    for key in ("global_loads", "global_stores", "shared_loads", "fma", "elem_bytes",
                "global_load_bytes", "global_store_bytes", "shared_load_bytes",
                "compulsory_bytes", "useful_flops"):
        assert key in d
    assert d["global_loads"] == 1600 and d["global_stores"] == 800


def test_problem_traffic_uses_the_rows_precision():
    p = problems.get("vector_add")
    k = registry.get("cuda_vector_add")
    s = p.parse_shape("1000")
    assert p.traffic(k, s, "fp16").model_bytes == p.traffic(k, s, "fp32").model_bytes // 2


@pytest.mark.parametrize("kernel", [k for k in registry.kernels() if pm.is_memory_op(k.op)
                                    and k.model is not None], ids=lambda k: k.name)
def test_every_memory_model_evaluates_at_any_shape(kernel):
    t = kernel.traffic(MatmulShape(64, 48, 40))    # as the Triton registry test does
    assert t.global_loads > 0 and t.compulsory_bytes > 0


def test_model_table_rows_for_memory_kernels():
    from bench import model_table

    rows = model_table.rows([registry.get("cuda_softmax_online")])
    assert rows and all(r["lecture_global_loads"] is None for r in rows)
    factor = {r["shape"]: r["extra_factor"] for r in rows}
    assert factor["4096x32768"] == 1.5 and factor["3000x3000"] == 1.0  # one step: read once


# --------------------------------------------------------------------------- Philox

# Known answers of Philox4x32-10 from the Random123 distribution (kat_vectors).
KAT = [
    ((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
    ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
    ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
     (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)),
]


@pytest.mark.parametrize("counter, key, expected", KAT)
def test_philox_known_answers(counter, key, expected):
    c = [torch.tensor([v], dtype=torch.int64) for v in counter]
    out = pm.philox4x32_10(*c, *key)
    assert tuple(int(w) for w in out) == expected


def test_philox_uniforms_are_in_the_unit_interval_and_uniform():
    u = pm.philox_reference(1 << 16, seed=13)
    assert float(u.min()) >= 0.0 and float(u.max()) <= 1.0
    assert abs(float(u.mean()) - 0.5) < 5 * math.sqrt(1 / 12 / u.numel())
    assert not torch.equal(u, pm.philox_reference(1 << 16, seed=14))
    # element 4g + j is word j of counter g: the first 8 of 10 elements are those of 8
    assert torch.equal(pm.philox_reference(10, 7)[:8], pm.philox_reference(8, 7))


def test_expected_dropout_is_relu_at_p_zero():
    x = torch.randn(1001)
    assert torch.equal(pm.relu_dropout_expected(x, 0.0, 3), torch.relu(x))


# --------------------------------------------------------------------------- errors

def _inputs(op, text, precision="fp32", mode="random"):
    p = problems.get(op)
    s = p.parse_shape(text)
    return p, s, p.inputs(s, precision, seed=1, mode=mode)


@pytest.mark.parametrize("op, text", [("vector_add", "1000"), ("copy", "1000"),
                                      ("softmax", "30x50"), ("softmax", "30x50:dim=0")])
def test_errors_catch_wrong_outputs(op, text):
    from bench.catalog.memory_bound import EAGER

    p, s, inputs = _inputs(op, text)
    right = EAGER[op](*inputs)
    tol = p.tolerance(s, "fp32")
    assert p.error(right, inputs) <= tol
    wrong = right.clone()
    wrong.view(-1)[7] += 0.25
    assert p.error(wrong, inputs) > tol
    nan = right.clone()
    nan.view(-1)[-1] = math.nan                      # an element nobody wrote (poisoned)
    assert p.error(nan, inputs) == math.inf
    assert p.error(right.half(), inputs) == math.inf  # wrong dtype
    assert p.error(right.reshape(-1)[:-1], inputs) == math.inf  # wrong shape


def test_nonfinite_inputs_must_reach_the_output():
    p, s, inputs = _inputs("vector_add", "999", mode="nonfinite")
    x, y = inputs
    right = x + y
    assert p.error(right, inputs) <= p.tolerance(s, "fp32")
    assert p.error(torch.nan_to_num(right), inputs) == math.inf


def test_softmax_nonfinite_rows_follow_torch():
    p, s, (x, dim) = _inputs("softmax", "6x40", mode="nonfinite")
    ref = torch.softmax(x.double(), dim)
    assert torch.isnan(ref[0]).all() and torch.isnan(ref[3]).all()   # a NaN; a row of -inf
    assert torch.isfinite(ref[2]).all()                              # some -inf only
    out = torch.softmax(x, dim)
    assert p.error(out, (x, dim)) <= p.tolerance(s, "fp32")
    assert p.error(torch.nan_to_num(out), (x, dim)) == math.inf


def test_dropout_error_accepts_any_correct_dropout_and_rejects_mistakes():
    p, s, (x, prob, seed) = _inputs("relu_dropout", "20000")
    tol = p.tolerance(s, "fp32")
    mask = torch.rand(x.shape, generator=torch.Generator().manual_seed(5)) >= prob
    right = torch.where(mask, torch.relu(x) / (1 - prob), torch.zeros_like(x))
    assert p.error(right, (x, prob, seed)) <= tol
    assert p.error(pm.relu_dropout_expected(x, prob, seed), (x, prob, seed)) <= tol
    unscaled = torch.where(mask, torch.relu(x), torch.zeros_like(x))
    assert p.error(unscaled, (x, prob, seed)) > tol                  # missing 1 / (1 - p)
    assert p.error(torch.relu(x) / (1 - prob), (x, prob, seed)) == math.inf  # nothing dropped
    no_relu = torch.where(mask, x / (1 - prob), torch.zeros_like(x))
    assert p.error(no_relu, (x, prob, seed)) > tol
    quarter = torch.rand(x.shape, generator=torch.Generator().manual_seed(6)) >= 0.75
    wrong_rate = torch.where(quarter, torch.relu(x) / (1 - prob), torch.zeros_like(x))
    assert p.error(wrong_rate, (x, prob, seed)) == math.inf          # keep rate 1/4, not 1/2


def test_keep_rate_bound_can_fail():
    assert pm.keep_rate_z(5000, 10000, 0.5) == 0.0
    assert pm.keep_rate_z(5000 + 251, 10000, 0.5) > 5.0               # 5.02 sigma
    assert pm.keep_rate_z(5000 + 249, 10000, 0.5) < 5.0


def test_rgb_error_is_in_grey_levels():
    from bench.catalog.memory_bound import eager_rgb_to_grey

    p, s, (img,) = _inputs("rgb_to_grey", "3x33x65", precision="u8")
    grey = eager_rgb_to_grey(img)
    assert p.error(grey, (img,)) <= p.tolerance(s, "u8")
    off = grey.clone()
    off[3, 4] = (int(off[3, 4]) + 2) % 256
    assert p.error(off, (img,)) > p.tolerance(s, "u8")
    with pytest.raises(ValueError, match="3 x H x W"):
        p.parse_shape("4x10x10")


def test_exact_mode_is_exact_where_it_exists():
    p, s, inputs = _inputs("relu_dropout", "4099", mode="exact")
    assert p.error(pm.relu_dropout_expected(*inputs), inputs) == 0.0
    assert not problems.get("softmax").exact_possible(s, "fp32")
    assert "no exact mode" in problems.get("softmax").exact_note(s, "fp32")


# --------------------------------------------------------------------------- registry

def test_every_memory_op_has_cuda_triton_and_an_eager_reference_first():
    from bench import perf

    for op in MEMORY_OPS:
        mine = [k for k in registry.kernels() if k.op == op]
        assert {k.backend for k in mine} >= {"cuda", "triton", "torch"}, op
        assert perf.reference_for(op, registry.kernels()).version == "eager", op
        for k in mine:
            if k.twin:
                assert registry.get(k.twin).twin == k.name


def test_wrong_kernels_are_flagged_and_left_out_of_default_selections():
    bugs = [k for k in registry.kernels() if registry.deliberately_wrong(k)]
    assert {k.name for k in bugs} == {"triton_copy_bug_offsets_ignore_pid",
                                      "triton_copy_bug_pid_times_n",
                                      "triton_softmax_bug_flush_small",
                                      "triton_softmax_bug_sum_from_one",
                                      "triton_relu_dropout_bug_tail_zeroed",
                                      "triton_rgb_to_grey_bug_tail_unwritten",
                                      "triton_matmul_bug_drop_k_tile",
                                      "triton_matmul_bug_zero_1_in_100",
                                      "triton_matmul_bug_drop_n_tail"}
    for k in bugs:
        assert k.summary.startswith("DELIBERATELY WRONG") and k.version.startswith("bug")
    default = {k.name for k in registry.select(None)} | {k.name for k in registry.select("*")}
    assert not default & {k.name for k in bugs}
    assert {k.name for k in registry.select("*_bug_*")} == {k.name for k in bugs}
    assert {k.name for k in registry.select("triton_copy*")} == {"triton_copy"}
    assert {k.name for k in registry.select(None, include_wrong=True)} >= {k.name for k in bugs}


# --------------------------------------------------------------------------- fake kernels

@pytest.fixture
def fake_cuda():
    """Fake CUDA tensors on a CPU-only machine (what torch.compile traces with)."""
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        yield lambda *shape, dtype=torch.float32: torch.empty(*shape, dtype=dtype, device="cuda")


def test_fake_kernels_give_shapes_and_the_ops_messages(fake_cuda):
    """Every check the real op makes (bindings/memory_ops.cpp), made at trace time."""
    from bindings import _fake_memory as fm
    from bindings import config

    x = fake_cuda(4, 5)
    assert fm.FAKES["vector_add"](x, x).shape == (4, 5)
    assert fm.FAKES["relu_dropout"](x.half(), 0.5, 1).dtype == torch.float16
    assert fm.FAKES["softmax_online"](x, 0).shape == (4, 5)
    img = fake_cuda(3, 7, 9, dtype=torch.uint8)
    assert fm.FAKES["rgb_to_grey"](img).shape == (7, 9)
    # CUDA's grid: a block per 8 rows along x (2^31 - 1 of them), a block per 512 columns
    # along y, folded into (y, z) past 65535 (65535 x 65535 of them)
    wide, tall = 65535**2 * 512, (2**31 - 1) * 8
    assert (8, 512) == (config.memory_params()["GREY_BY"], fm.grey_columns_per_block())
    for h, w in ((1, 65535 * 512 + 1), (1, wide), (tall, 1)):
        assert fm.FAKES["rgb_to_grey"](fake_cuda(3, h, w, dtype=torch.uint8)).shape == (h, w)
    bad = [
        ("vector_add: x and y must have the same shape", "vector_add", (x, fake_cuda(5, 4))),
        ("vector_add: x and y must have the same dtype", "vector_add", (x, x.half())),
        ("softmax_row_sram: a row of 40000 elements", "softmax_row_sram", (fake_cuda(2, 40000), -1)),
        (r"softmax_online: dim must be in \[-2, 1\]", "softmax_online", (x, 2)),
        (r"relu_dropout: p must be in \[0, 1\)", "relu_dropout", (x, 1.0, 0)),
        ("relu_dropout: seed must be >= 0, got -1", "relu_dropout", (x, 0.5, -1)),
        ("copy: x must be float32, float16 or bfloat16", "copy", (x.int(),)),
        ("rgb_to_grey: the image must be uint8", "rgb_to_grey", (img.float(),)),
        (rf"rgb_to_grey: a 1 x {wide + 1} image needs {65535**2 + 1} blocks along grid y and "
         rf"z \(one per 512 columns\), more than the 65535 x 65535 CUDA allows: W must be <= "
         rf"{wide}$", "rgb_to_grey", (fake_cuda(3, 1, wide + 1, dtype=torch.uint8),)),
        (rf"rgb_to_grey: a {tall + 1} x 1 image needs {2**31} blocks along grid x \(one per 8 "
         rf"rows\), more than the {2**31 - 1} CUDA allows: H must be <= {tall}$", "rgb_to_grey",
         (fake_cuda(3, tall + 1, 1, dtype=torch.uint8),)),
    ]
    for message, op, args in bad:
        with pytest.raises(Exception, match=message):
            fm.FAKES[op](*args)


def test_fake_kernels_reject_cpu_tensors():
    from bindings import _fake_memory as fm

    with pytest.raises(Exception, match="copy: x must be a CUDA tensor, got cpu"):
        fm.FAKES["copy"](torch.empty(3))
    with pytest.raises(Exception, match="rgb_to_grey: the image must be a CUDA tensor"):
        fm.FAKES["rgb_to_grey"](torch.empty(3, 2, 2, dtype=torch.uint8))


def test_matmul_fake_kernels_check_what_the_ops_check(fake_cuda):
    """bindings/matmul_ops.cpp's checks at trace time; and no grid limit: every launcher's
    grid covers any M and N below 2^31 (its rows of blocks fold into grid y and z)."""
    from bindings import MATMUL_OPS
    from bindings import _fake as fk

    a, b = fake_cuda(5, 7), fake_cuda(7, 3)
    for op in MATMUL_OPS:
        fake = fk._matmul_fake(op)
        assert fake(a, b).shape == (5, 3)
        with pytest.raises(Exception, match=f"{op}: A and B must be float32"):
            fake(a.half(), b.half())
        with pytest.raises(Exception, match=f"{op}: inner dimensions must agree"):
            fake(a, fake_cuda(6, 3))
        with pytest.raises(Exception, match=f"{op}: A and B must be 2-D"):
            fake(fake_cuda(2, 5, 7), b)
        most = 2**31 - 1
        assert fake(fake_cuda(most, 1), fake_cuda(1, 1)).shape == (most, 1)
        assert fake(fake_cuda(1, 1), fake_cuda(1, most)).shape == (1, most)
        with pytest.raises(Exception, match=f"{op}: every dimension must be below 2\\^31, got "
                                            f"M = {most + 1}, K = 1, N = 1"):
            fake(fake_cuda(most + 1, 1), fake_cuda(1, 1))
    with pytest.raises(Exception, match="must be CUDA tensors, got cpu"):
        fk._matmul_fake(MATMUL_OPS[0])(torch.empty(2, 2), torch.empty(2, 2))


def test_fake_kernels_cover_every_schema():
    """bindings/memory_ops.cpp defines one schema per op of CVT_MEMORY_OPS (it expands the
    list), and every one has a fake kernel."""
    import re
    from pathlib import Path

    from bindings import _fake_memory as fm
    from bindings import config

    text = (Path(__file__).resolve().parents[2] / "bindings" / "memory_ops.cpp").read_text()
    assert "CVT_MEMORY_OPS(CVT_MEMORY_SCHEMA)" in text
    assert sorted(re.findall(r"#define CVT_SCHEMA_(\w+) ", text)) == sorted(config.MEMORY_OPS)
    assert sorted(config.MEMORY_OPS) == sorted(fm.FAKES)


# --------------------------------------------------------------------------- test image

def test_test_image_landmarks():
    from bench import images
    from bench.catalog.memory_bound import eager_rgb_to_grey

    for h, w in (images.GUIDE_SIZE, (1066, 1600), (24, 24)):
        img = images.test_image(h, w)
        assert img.shape == (3, h, w) and img.dtype == torch.uint8
        grey = eager_rgb_to_grey(img)
        for name, (r, c, level) in images.landmarks(h, w).items():
            assert int(grey[r, c]) == level, name
    with pytest.raises(ValueError):
        images.test_image(10, 10)
