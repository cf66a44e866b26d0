"""CPU tier: triton_batched's autotuned tf32 candidates (its default at tf32) that swap the
operands (B^T from registers), compiled for sm_90 without a GPU, wait for each k-step's
wgmma: no register written while a wgmma still reads it (bench/wgmma_hazards.py) and no
wgmma serialised by ptxas (warning C7515). The compiles run in a subprocess: the CPU tier
interprets Triton kernels (TRITON_INTERPRET=1), and an interpreted kernel cannot be compiled.
"""
from __future__ import annotations

import pytest

from tests.support.compiled import json_from_subprocess


COMPILE = r'''
import json, re, subprocess, tempfile, os
import torch
from bench import wgmma_hazards as wh
from triton_impl import matmul_batched as mb, tiles
report = {"batched": {}}
for c in tiles.AUTOTUNE_CONFIGS["tf32"]:
    if not c["B_FROM_REGISTERS"]:
        continue
    consts = {k: v for k, v in c.items() if k not in ("num_warps", "num_stages")}
    consts.update(INPUT_PRECISION="tf32", NATIVE_TF32_ROUND=True, K_WIDE=False)
    sass, warnings = wh.compile_for_sm90(mb._tunable_kernel,
                                         wh._pointer_signature(mb._tunable_kernel, consts),
                                         consts, c["num_warps"], c["num_stages"])
    name = "{BLOCK_M}x{BLOCK_N}x{BLOCK_K} w{num_warps} s{num_stages}".format(**c)
    report["batched"][name] = dict(hgmma=wh.hgmma_count(sass),
                                   hazards=[t for _, t in wh.hazards(sass)], warnings=warnings)
print(json.dumps(report))
'''


@pytest.fixture(scope="module")
def compiled():
    return json_from_subprocess(["-c", COMPILE])


@pytest.mark.slow
def test_batched_tf32_swap_candidates_are_race_free(compiled):
    from triton_impl import tiles

    swaps = sum(c["B_FROM_REGISTERS"] for c in tiles.AUTOTUNE_CONFIGS["tf32"])
    assert len(compiled["batched"]) == swaps > 0
    for name, r in compiled["batched"].items():
        assert r["hgmma"] > 0, name
        assert r["hazards"] == [], (name, r["hazards"][:4])
        assert r["warnings"] == [], (name, r["warnings"])
