"""The Hopper-specific matmul (triton_impl/matmul_persistent.py, registered as
triton_persistent) without running it: its tile lists fit the H100's shared memory and the
limits of Triton 3.6's Hopper passes, and its registry record and traffic model. Runs of the
kernel: tests/interpreter/test_matmul_persistent.py and tests/gpu/test_matmul_persistent.py.
"""
from __future__ import annotations

from bench.catalog import matmul_triton
from bench.families.matmul.models import MatmulShape
from bindings.precision import element_bytes

HOPPER = {k.name: k for k in matmul_triton.records() if k.name == "triton_persistent"}


def test_tile_lists_fit_the_hardware():
    from triton_impl import tiles_hopper as th

    keys = {"tf32", "tf32-swap", "fp16", "bf16"}
    assert set(th.PERSISTENT_CONFIGS) == keys | {k + "-stack" for k in keys}
    assert set(th.PERSISTENT_INTERPRETER_CONFIG) == set(th.PERSISTENT_CONFIGS)
    for key, configs in th.PERSISTENT_CONFIGS.items():
        for cfg in configs:
            assert th.persistent_smem_bytes(cfg, element_bytes(key.split("-")[0])) <= th.SMEM_BYTES
            assert cfg["BLOCK_N"] % cfg["EPILOGUE_SPLIT"] == 0
            assert cfg.get("num_ctas", 1) == 1    # clusters: probe only (grid = SMs / ctas)
            if cfg["WARP_SPECIALIZE"]:     # Triton 3.6's Hopper pass: 4 warps, no flattening
                assert cfg["num_warps"] == 4 and not cfg["FLATTEN"]
    for cfg in th.PERSISTENT_CONFIGS["tf32-swap"]:
        # flattened swap loops serialise every wgmma (ptxas C7515); warp specialisation
        # does not compile with wait_for_dot
        assert not cfg["FLATTEN"] and not cfg["WARP_SPECIALIZE"]
    for key in keys:
        # stacks (3-D descriptors): the 2-D list less warp specialisation, which Triton 3.6's
        # pass does not compile for them
        stack = th.PERSISTENT_CONFIGS[key + "-stack"]
        assert stack == [c for c in th.PERSISTENT_CONFIGS[key] if not c["WARP_SPECIALIZE"]]
        assert stack


def test_hopper_records_and_models():
    from bench import registry

    assert set(HOPPER) == {"triton_persistent"}
    assert registry.get("triton_persistent").precisions == ("tf32", "fp16", "bf16")
    for k in HOPPER.values():
        assert k.backend == "triton" and k.summary and len(k.summary) < 120
        t = k.traffic(MatmulShape(4096, 4096, 4096))
        assert t.global_loads > 0 and t.fma == 4096 ** 3
        # 128x256 tiles: A is read N/256 times, B M/128 times
        n = 4096
        assert t.global_loads == n * n * (n // 256) + n * n * (n // 128)
