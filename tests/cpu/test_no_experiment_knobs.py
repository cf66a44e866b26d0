"""CPU tier: no keyword or compile-time switch survives only for a past comparison.

A variant is a rung, or it is history (the dropped ones and their commits are in
docs/performance/memory_bound.md, "Variants measured and dropped").

  - every public keyword argument (keyword-only, or with a default) of the public functions
    of the triton_impl modules the registry names as kernel sources is in PRODUCT_KEYWORDS,
    with the product file that passes it and a pattern that file must contain (an entry
    that no longer exists fails). A tile, a configuration, a path or a precision that only
    tests force belongs in a module-private function (softmax_split's _softmax_split, the
    matmuls' _matmul);
  - every compile-time switch of cuda/ (`#ifndef CVT_...`, `#ifdef`, `#if`) is in SWITCHES,
    under the product file that reads it; no switch is tested for its value (`#if CVT_X`,
    `CVT_X != 0`): a 0 branch kept beside the default is a variant.
A new keyword or switch fails here until it names the product code that uses it.
"""
from __future__ import annotations

import importlib
import inspect
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# (module of triton_impl, function, keyword) -> (product file that passes it, what that file
# says when it does). Inputs of an op (precision, dim, p, seed) are passed by position.
PRODUCT_KEYWORDS = {
    ("softmax_split", "softmax_split", "dim"):
        ("triton_impl/softmax_split.py", r"softmax_split\(x, dim, "),
    ("softmax_split", "softmax_split", "two_launches"):       # while torch traces
        ("triton_impl/softmax_split.py", r"two_launches=_common\.tracing\(\(x,\)\)"),
    ("softmax_split", "softmax_split", "fallback"):           # rows too long for one launch
        ("triton_impl/softmax_split.py", r"two_launches=_common\.tracing\(\(x,\)\), fallback=True"),
    ("softmax", "softmax", "dim"): ("triton_impl/softmax.py", r"softmax\(x, dim, \"online\"\)"),
    ("softmax", "softmax", "version"): ("triton_impl/softmax.py", r"softmax\(x, dim, \"row_sram\"\)"),
    ("softmax", "op", "version"): ("bench/catalog/memory_bound.py", r"_triton\(\"softmax\", \"online\"\)"),
    ("softmax", "softmax_row_sram", "dim"): ("triton_impl/softmax.py", r"def softmax_row_sram\(x: torch\.Tensor, dim"),
    ("softmax", "softmax_online", "dim"): ("triton_impl/softmax.py", r"def softmax_online\(x: torch\.Tensor, dim"),
    ("softmax", "softmax_bug_flush_small", "dim"):
        ("bench/catalog/memory_bound.py", r"\"softmax_bug_flush_small\""),
    ("softmax", "softmax_bug_sum_from_one", "dim"):
        ("bench/catalog/memory_bound.py", r"\"softmax_bug_sum_from_one\""),
    ("relu_dropout", "relu_dropout", "p"): ("triton_impl/relu_dropout.py", r"relu_dropout\(x, p, seed\)"),
    ("relu_dropout", "relu_dropout", "seed"): ("triton_impl/relu_dropout.py", r"relu_dropout\(x, p, seed\)"),
    ("relu_dropout", "relu_dropout_bug_tail_zeroed", "p"):
        ("bench/catalog/memory_bound.py", r"\"relu_dropout_bug_tail_zeroed\""),
    ("relu_dropout", "relu_dropout_bug_tail_zeroed", "seed"):
        ("bench/catalog/memory_bound.py", r"\"relu_dropout_bug_tail_zeroed\""),
    **{(m, "matmul", "precision"): (f"triton_impl/{m}.py", r"return matmul\(a, b, precision\)")
       for m in ("matmul_autotuned", "matmul_batched", "matmul_grouped", "matmul_persistent",
                 "matmul_split_k")},
    ("matmul_batched", "params", "precision"):
        ("triton_impl/matmul_batched.py", r"tile or params\(precision\)"),
    ("matmul_grouped", "params", "precision"):
        ("triton_impl/matmul_grouped.py", r"tile or params\(precision\)"),
    ("matmul_batched", "tma_plan", "tile"):
        ("triton_impl/matmul_batched.py", r"tma_plan\(a, b, precision, tile\)"),
    ("matmul_persistent", "tf32_mode", "tf32_row_major_b"):
        ("triton_impl/matmul_persistent.py", r"tf32_mode\(a, b, tf32_row_major_b, config\)"),
    ("matmul_persistent", "tf32_mode", "config"):
        ("triton_impl/matmul_persistent.py", r"tf32_mode\(a, b, tf32_row_major_b, config\)"),
    ("matmul_persistent", "plan", "tf32_row_major_b"):
        ("triton_impl/matmul_persistent.py", r"plan\(a, b, precision, mode\)"),
    ("matmul_persistent", "candidates_key", "swap_ab"):
        ("triton_impl/matmul_persistent.py", r"candidates_key\(precision, swap_ab, batch > 1\)"),
    ("matmul_persistent", "candidates_key", "stack"):
        ("triton_impl/matmul_persistent.py", r"candidates_key\(precision, swap_ab, batch > 1\)"),
    ("matmul_persistent", "launch", "b_k_major"):
        ("triton_impl/matmul_batched.py", r"launch\(a3, b3, c3, precision, b_k_major=b_k_major\)"),
    ("matmul_persistent", "launch", "swap_ab"):
        ("triton_impl/matmul_persistent.py", r"b_k_major=b_k_major, swap_ab=swap_ab,\s+config=config"),
    ("matmul_persistent", "launch", "config"):
        ("triton_impl/matmul_persistent.py", r"b_k_major=b_k_major, swap_ab=swap_ab,\s+config=config"),
    ("matmul_split_k", "splits_for", "programs_per_sm"):
        ("triton_impl/matmul_split_k.py", r"p\.get\(\"programs_per_sm\", PROGRAMS_PER_SM\)"),
    ("matmul_split_k", "splits_for", "whole_rounds"):
        ("triton_impl/matmul_split_k.py", r"whole_rounds=whole_rounds"),
}

# Compile-time switches of cuda/, by the product file that reads them (besides their
# definition). The launch parameters of matmul_config.h and memory_config.h are also read by
# bindings/config.py for the Triton twins, the fake kernels and the registry.
SWITCHES = {
    "cuda/vector_add.cu": ("CVT_ADD_THREADS", "CVT_ADD_UNROLL", "CVT_ADD_UNROLL_SMALL"),
    "cuda/copy.cu": ("CVT_COPY_THREADS", "CVT_COPY_UNROLL"),
    "cuda/relu_dropout.cu": ("CVT_DROP_THREADS", "CVT_DROP_UNROLL"),
    "cuda/memory_launchers.h": ("CVT_GREY_BX", "CVT_GREY_BY", "CVT_GREY_PX",
                                "CVT_SOFTMAX_SRAM_MAX_N", "CVT_SPLIT_AUTO_MAX_CLUSTER",
                                "CVT_SPLIT_MAX_CLUSTER", "CVT_SPLIT_MIN_BLOCKS",
                                "CVT_SPLIT_SLICE_BYTES", "CVT_SPLIT_THREADS"),
    "cuda/memory_common.cuh": ("CVT_SOFTMAX_BLOCKS_PER_SM", "CVT_SOFTMAX_COLUMNS_FIRST"),
    "cuda/softmax_online.cu": ("CVT_ONLINE_COL_THREADS", "CVT_ONLINE_COL_UNROLL",
                               "CVT_ONLINE_ELEMENTS", "CVT_ONLINE_PACKED_BYTES",
                               "CVT_ONLINE_PACKED_THREADS", "CVT_ONLINE_SCALAR_UNROLL",
                               "CVT_ONLINE_THREADS", "CVT_SOFTMAX_COLUMNS_MAX"),
    "cuda/softmax_row_sram.cu": ("CVT_SRAM_ELEMENTS", "CVT_SRAM_PACKED_MIN_BLOCKS",
                                 "CVT_SRAM_PACKED_UNROLL", "CVT_SRAM_SCALAR_UNROLL",
                                 "CVT_SRAM_THREADS", "CVT_SRAM_UNROLL_SHORT"),
    "cuda/matmul_v1_coalesced.cu": ("CVT_V1_BLOCK",),
    "cuda/matmul_v1_5_thread_tiling.cu": ("CVT_V1_5_T", "CVT_V1_5_V"),
    "cuda/matmul_v2_register_tiling.cu": ("CVT_V2_T", "CVT_V2_V"),
    "cuda/matmul_v3_smem_tiling.cu": ("CVT_V3_L", "CVT_V3_S", "CVT_V3_V"),
    "cuda/matmul_v4_vectorized.cu": ("CVT_V4_L", "CVT_V4_S", "CVT_V4_V"),
    "cuda/matmul_v5_warptiling.cu": tuple(f"CVT_V5_{k}" for k in ("BK", "BM", "BN", "TM", "TN",
                                                                  "WM", "WN")),
    **{f"cuda/{f}.cu": tuple(f"CVT_{v}_{k}" for k in ("BK", "BM", "BN", "GROUP", "STAGES",
                                                       "TM", "TN", "WM", "WN"))
       for v, f in (("V6", "matmul_v6_pipelined"), ("V7", "matmul_v7_lean_fetch"))},
    "cuda/matmul_v8_split_k.cu": tuple(f"CVT_V8_{k}" for k in (
        "BK", "BM", "BN", "GROUP", "MAX_SPLITS", "MIN_SPLIT_TILES", "STAGES", "TM", "TN", "WM",
        "WN")),
    "cuda/matmul_t1_mma_sync.cu": tuple(f"CVT_T1_{k}" for k in ("BK", "BM", "BN", "GROUP",
                                                                "STAGES", "WM", "WN")),
    "cuda/matmul_t2_wgmma_tma.cu": ("CVT_T2_BN", "CVT_T2_GROUP", "CVT_T2_STAGES"),
    "cuda/matmul_t3_warp_specialized.cu": ("CVT_T3_BN", "CVT_T3_CLUSTER", "CVT_T3_GROUP",
                                           "CVT_T3_STAGES"),
    "cuda/matmul_t4_tf32.cu": ("CVT_T4_CLUSTER", "CVT_T4_GROUP", "CVT_T4_STAGES"),
    "cuda/matmul_t5_stream_k.cu": tuple(f"CVT_T5_{k}" for k in (
        "BN", "CLUSTER", "GROUP", "MAX_SPLIT", "MIN_GAIN", "MIN_RUN", "STAGES")),
    # defined by the header itself where the compiler targets sm_90a (the Hopper bodies)
    "cuda/hopper.cuh": ("CVT_HOPPER_DEVICE",),
    # CUDA's 65535; the CPU emulator of CUDA (bench/cuda_emulator) has the same limit, and its
    # tests lower both to reach the (y, z) fold of large grids
    "cuda/common.cuh": ("CVT_MAX_GRID_YZ",),
    # CMakeLists.txt's option: the drivers time cuBLAS beside the kernels
    "cuda/driver/matmul_driver.cu": ("CVT_WITH_CUBLAS",),
}
USED_ELSEWHERE = {"CVT_HOPPER_DEVICE": ("cuda/hopper.cuh", r"#define CVT_HOPPER_DEVICE 1"),
                  "CVT_MAX_GRID_YZ": ("bench/cuda_emulator/cuda_runtime.h",
                                      r"#ifndef CVT_MAX_GRID_YZ"),
                  "CVT_WITH_CUBLAS": ("CMakeLists.txt", r"option\(CVT_WITH_CUBLAS ")}

SWITCH = re.compile(r"^\s*#\s*(?:ifndef|ifdef|if|elif)\s+(?:!?\s*defined\s*\(?\s*)?(CVT_\w+)",
                    re.M)
VALUE_TESTED = re.compile(r"^\s*#\s*(?:if|elif)\s+!?\s*(CVT_\w+)\b|\b(CVT_\w+)\s*[!=]=\s*0\b",
                          re.M)


def _cuda_files() -> list[Path]:
    return sorted(p for p in (ROOT / "cuda").rglob("*") if p.suffix in (".h", ".cuh", ".cu"))


def _public_keywords() -> set[tuple[str, str, str]]:
    from bench import registry

    modules = sorted({k.source[len("triton_impl/"):-len(".py")] for k in registry.select("*")
                      if k.source.startswith("triton_impl/") and k.source.endswith(".py")})
    found = set()
    for name in modules:
        module = importlib.import_module(f"triton_impl.{name}")
        for fname, f in vars(module).items():
            if fname.startswith("_") or not inspect.isfunction(f) or f.__module__ != module.__name__:
                continue
            for p in inspect.signature(f).parameters.values():
                if p.kind == p.KEYWORD_ONLY or p.default is not p.empty:
                    found.add((name, fname, p.name))
    return found


def test_every_public_keyword_names_its_caller():
    found = _public_keywords()
    listed = set(PRODUCT_KEYWORDS)
    new = sorted(found - listed)
    assert not new, ("public keywords without a product caller (a path the product does not "
                     f"take belongs in a module-private helper, a variant in the docs): {new}")
    gone = sorted(listed - found)
    assert not gone, f"listed keywords that no longer exist: drop them from the list: {gone}"


def test_the_product_callers_pass_their_keywords():
    for key, (path, pattern) in PRODUCT_KEYWORDS.items():
        assert (ROOT / path).exists(), (key, path)
        assert re.search(pattern, (ROOT / path).read_text()), (
            f"{key}: {path} does not say {pattern!r}: no product caller, no keyword")


def test_every_cuda_switch_names_its_reader():
    found: dict[str, list[str]] = {}
    for p in _cuda_files():
        for m in SWITCH.finditer(p.read_text()):
            found.setdefault(m.group(1), []).append(str(p.relative_to(ROOT)))
    listed = {name: path for path, names in SWITCHES.items() for name in names}
    new = sorted(set(found) - set(listed))
    assert not new, f"compile-time switches without a reader in the product: {new}"
    gone = sorted(set(listed) - set(found))
    assert not gone, f"listed switches that no longer exist: drop them from the list: {gone}"
    for name, path in listed.items():
        code = [line for line in (ROOT / path).read_text().splitlines()
                if not line.lstrip().startswith(("//", "#"))]
        used = any(re.search(rf"\b{name}\b", line) for line in code)
        if name in USED_ELSEWHERE:
            other, pattern = USED_ELSEWHERE[name]
            used = used or bool(re.search(pattern, (ROOT / other).read_text()))
        assert used, f"{name}: {path} does not use it"


def test_no_switch_is_tested_for_its_value():
    """A switch whose 0 keeps another branch (CVT_SPLIT_LEAN was one) is a variant kept
    beside the default: delete the branch, cite it by commit in the docs."""
    for p in _cuda_files():
        hits = [m.group(1) or m.group(2) for m in VALUE_TESTED.finditer(p.read_text())]
        assert not hits, f"{p.relative_to(ROOT)}: switches tested for their value: {hits}"
