"""Rewrites the matmul kernel files of cuda/ for the CPU emulator (cuda_runtime.h here):
a launch `kernel<...><<<grid, block, smem, stream>>>(args);` becomes
`cvt_emu::launch(grid, block, smem, kernel<...>, args);` and `extern __shared__` memory
becomes the emulator's buffer. Writes one file that includes the FFMA ladder
(all_kernels.inc), one that includes the tensor-core rungs (tensor_core_kernels.inc), one
that includes the paths beside the ladder (skinny_kernels.inc: cuda/matmul_skinny.cu) and
one that includes the TMA rungs' staging (staging_kernels.inc: cuda/staging.cu).

    python bench/cuda_emulator/emulate.py OUT_DIR
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

_ROOT = Path(__file__).resolve().parents[2]
# cuda/ of a checkout; in an installed copy the sources live in bindings/cuda/
CUDA = _ROOT / "cuda" if (_ROOT / "cuda").is_dir() else _ROOT / "bindings" / "cuda"
LAUNCH = re.compile(r"([\w:]+(?:<[^;]*?>)?)\s*<<<(.*?)>>>\s*\((.*?)\);", re.S)


def split_top_level(text: str) -> list[str]:
    """'dim3(a, b), t, 0, s' -> ['dim3(a, b)', 't', '0', 's']."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += ch in "([<"
        depth -= ch in ")]>"
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    return parts + [cur.strip()]


# The tensor-core rungs this emulator runs: t1 (ldmatrix and mma.sync are emulated lane by
# lane in mma.cuh). The Hopper rungs (t2 on: TMA, wgmma, mbarrier transaction counts,
# clusters) have no emulation; the GPU tier checks them (tests/gpu/test_tensor_core_rungs.py).
EMULATED_TENSOR_CORE_RUNGS = ("t1_mma_sync",)


def rewrite(source: str) -> str:
    def launch(m: re.Match) -> str:
        config = split_top_level(m.group(2))
        smem = config[2] if len(config) > 2 else "0"
        return f"cvt_emu::launch({config[0]}, {config[1]}, {smem}, {m.group(1)}, {m.group(3)});"

    source = re.sub(r"extern\s+__shared__\s+(?:__align__\(\d+\)\s+)?([\w ]+?)\s*(\w+)\s*\[\s*\];",
                    r"\1* \2 = reinterpret_cast<\1*>(cvt_emu::block_smem());", source)
    return LAUNCH.sub(launch, source)


def main(out_dir: str) -> Path:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    here = Path(__file__).resolve().parent
    # beside the rewritten kernels, so that their #include "cp_async.cuh" and
    # "cluster.cuh" find the emulated ones first
    for header in ("cp_async.cuh", "cluster.cuh", "mma.cuh"):
        (out / header).write_text((here / header).read_text())
    # and split_k.cuh (split_k_fp32's sums), rewritten, so that its mma.cuh is the one here
    (out / "split_k.cuh").write_text(rewrite((CUDA / "split_k.cuh").read_text()))
    # the FFMA ladder (CVT_MATMUL_OPS) and the tensor-core rungs the emulator can run
    # (EMULATED_TENSOR_CORE_RUNGS), whose warp-wide ldmatrix and mma.sync are mma.cuh's here
    ladder = sorted(CUDA.glob("matmul_v*.cu")) + [CUDA / "matmul_split_k_fp32.cu"]
    tensor_cores = [CUDA / f"matmul_{rung}.cu" for rung in EMULATED_TENSOR_CORE_RUNGS]
    skinny = [CUDA / "matmul_skinny.cu"]
    staging = [CUDA / "staging.cu"]
    for cu in ladder + tensor_cores + skinny + staging:
        (out / cu.name).write_text(rewrite(cu.read_text()))
    for name, files in (("all_kernels.inc", ladder), ("tensor_core_kernels.inc", tensor_cores),
                        ("skinny_kernels.inc", skinny), ("staging_kernels.inc", staging)):
        (out / name).write_text("".join(f'#include "{cu.name}"\n' for cu in files))
    # the runner's table of rungs (runner_tensor_cores.cpp)
    (out / "emulated_rungs.inc").write_text(
        "".join(f"X({rung})\n" for rung in EMULATED_TENSOR_CORE_RUNGS))
    return out


if __name__ == "__main__":
    main(sys.argv[1])
