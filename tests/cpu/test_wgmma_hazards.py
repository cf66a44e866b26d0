"""Register-operand wgmma, checked in the compiled code (CPU tier: no GPU needed).

The tf32 swap kernels feed wgmma's left operand from registers, which the tensor core
reads while the wgmma runs. bench/wgmma_hazards.py finds every write to such a register
before the wait that retires its wgmma. Here:
  - the detector itself, on hand-written SASS (it must find the race of Triton 3.6's swap:
    fragments of the next k-step loaded at the top of the loop while three wgmma of the
    last k-step are pending, and must accept the legal order);
  - every shipped register-operand kernel (matmul_swap_gluon as its 2-D, batched and
    broadcast launches specialise it, the swap lists of matmul_persistent and
    matmul_autotuned), compiled for sm_90 by Triton's own ptxas:
    no hazard, and no wgmma serialised by ptxas (warning C7515).
The compile runs in a subprocess: the CPU tier interprets Triton kernels
(TRITON_INTERPRET=1), and an interpreted kernel cannot be compiled.
"""
from __future__ import annotations

import pytest

from bench import wgmma_hazards as wh
from tests.support.compiled import json_from_subprocess


def _sass(lines: list[str]) -> str:
    return "\n".join(f"        /*{16 * i:04x}*/                   {text} ;"
                     for i, text in enumerate(lines))


LOOP_TOP = "SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR4], R2"


def test_detector_finds_the_back_edge_race():
    """Triton 3.6's order: all fragments loaded at the top, one HGMMA per k8 slice, at most
    three commit groups left pending, and the loop closes with three in flight."""
    racy = [LOOP_TOP]
    racy += [f"LDS R{152 + r}, [R{r}]" for r in range(16)]
    for s in range(4):
        racy += ["WARPGROUP.ARRIVE",
                 f"HGMMA.64x256x8.F32.TF32 R24, R{152 + 4 * s}, gdesc[UR8], R24, gsb0",
                 "WARPGROUP.DEPBAR.LE gsb0, 0x3"]
    racy += ["@P0 BRA 0x0"]
    found = wh.hazards(_sass(racy))
    assert found and all(p == 1 for p, _ in found)          # only across the back-edge
    assert {t.split(",")[0] for _, t in found} == {f"LDS R{156 + r}" for r in range(12)}


def test_detector_accepts_loads_after_the_retiring_wait():
    """matmul_swap_gluon's order: each slice's fragment loaded after the wait that retired
    the wgmma which last read those registers (two register sets, one group in flight)."""
    legal = [LOOP_TOP]
    for s in range(4):
        base = 152 + 4 * (s % 2)
        legal += [f"LDS R{base + r}, [R{r}]" for r in range(4)]
        legal += ["WARPGROUP.ARRIVE",
                  f"HGMMA.64x256x8.F32.TF32 R24, R{base}, gdesc[UR8], R24, gsb0",
                  "WARPGROUP.DEPBAR.LE gsb0, 0x1"]
    legal += ["@P0 BRA 0x0"]
    assert wh.hgmma_count(_sass(legal)) == 4
    assert wh.hazards(_sass(legal)) == []
    # the same order with two groups in flight reuses a register set too early
    two = [t.replace("gsb0, 0x1", "gsb0, 0x2") for t in legal]
    assert wh.hazards(_sass(two))


@pytest.fixture(scope="module")
def compiled():
    return json_from_subprocess(["-m", "bench.wgmma_hazards"])


def test_every_register_operand_kernel_is_race_free(compiled):
    from triton_impl import tiles, tiles_hopper

    swaps = len(tiles_hopper.PERSISTENT_CONFIGS["tf32-swap"]) + sum(
        c["B_FROM_REGISTERS"] for c in tiles.AUTOTUNE_CONFIGS["tf32"])
    assert len(compiled) == len(wh.GLUON_VARIANTS) + swaps
    assert set(wh.GLUON_VARIANTS) <= set(compiled)
    for name, r in compiled.items():
        assert r["hgmma"] > 0, name                  # the loop was found and read
        assert r["hazards"] == [], (name, r["hazards"][:4])
        assert r["warnings"] == [], (name, r["warnings"])     # no C7515: not serialised
