"""The matmul family: C = A @ B on the CUDA ladder, its Triton twins, the fast Triton matmuls
and cuBLAS, at fp32 (FFMA), tf32, fp16 and bf16.

    problem.py        what "correct" means: inputs, the float64 reference, the error bound
    models.py         closed-form traffic of the CUDA ladder (the lecture's formulas)
    models_triton.py  the same for the Triton matmuls
    report.py         its sections of report.md
    plots.py          its figures (throughput, traffic per level, roofline, the lecture figure)

Kernel records: bench/catalog/matmul_cuda.py, matmul_triton.py, matmul_reference.py.
"""
from __future__ import annotations

from bench.families import Family
from bench.families.matmul.models import is_ladder, is_tensor_core
from bench.families.matmul.problems import MatmulProblem
from bindings import precision as prec

CEILING_SIZE = 4096              # cuBLAS ceilings at 4096^3 (docs/DESIGN.md, "Ceilings")
# FP32 lanes per SM (FFMAs per SM per clock), by compute capability, from NVIDIA's
# architecture whitepapers: the A100 (8.0) has 64; GA10x (8.6: RTX 30xx, A10, A40), Ada (8.9:
# L4, L40, RTX 40xx) and Hopper (9.0: H100, H200) have 128.
FP32_LANES_PER_SM = {(7, 0): 64, (7, 5): 64, (8, 0): 64, (8, 6): 128, (8, 7): 128,
                     (8, 9): 128, (9, 0): 128, (10, 0): 128, (12, 0): 128}

_PROBLEM = MatmulProblem()


def cublas_tflops(flush, precisions=prec.MATMUL, size: int = CEILING_SIZE, policy=None) -> dict:
    """TFLOP/s of cuBLAS at size^3 for each precision."""
    from bench import registry
    from bench.timing import time_launches

    kernel = next((k for k in registry.kernels() if k.op == "matmul" and k.backend == "cublas"),
                  None)
    if kernel is None:
        return {}
    shape = _PROBLEM.parse_shape(f"{size}x{size}x{size}")
    out = {}
    for p in precisions:
        if p not in kernel.precisions:
            continue
        fn = kernel.runner(p)
        a, b = _PROBLEM.inputs(shape, p, seed=0, device="cuda")
        fn(a, b)  # first call outside timing (cuBLAS picks its algorithm, loads its kernel)
        t = time_launches(lambda: fn(a, b), flush, policy)
        out[p] = _PROBLEM.useful_flops(shape) / (t.median_ms * 1e-3) / 1e12
    return out


def fp32_lanes_per_sm(env: dict) -> int | None:
    """FFMAs per SM per clock of the GPU the environment describes, or None if unknown."""
    try:
        major, minor = (int(x) for x in str(env.get("compute_capability")).split("."))
    except ValueError:
        return None
    return FP32_LANES_PER_SM.get((major, minor))


def nominal_fp32_tflops(env: dict) -> float | None:
    """SMs x FP32 lanes per SM x 2 flops x max SM clock (the clock needs pynvml); None
    where a number is unknown (no lane count for this architecture, no clock)."""
    sms, mhz, lanes = env.get("sm_count"), env.get("sm_clock_max_mhz"), fp32_lanes_per_sm(env)
    if not sms or not mhz or not lanes:
        return None
    return sms * lanes * 2 * mhz * 1e6 / 1e12


class MatmulFamily(Family):
    name = "matmul"

    def problems(self):
        return [_PROBLEM]

    def groups(self):
        return {
            "ladder": lambda k: k.op == "matmul" and k.backend in ("cuda", "triton")
            and is_ladder(k.version),
            "tensor_cores": lambda k: k.op == "matmul" and k.backend == "cuda"
            and is_tensor_core(k.version),
            "matmul": lambda k: k.op == "matmul",
        }

    def ceilings(self, flush, env, policy, ops):
        """cuBLAS at 4096^3 at every precision (fp32 with TF32 off is the FFMA ceiling the
        ladder climbs towards), and the nominal FP32 peak beside it, to show how far below
        it even cuBLAS stays."""
        return {"cublas_shape": f"{CEILING_SIZE}x{CEILING_SIZE}x{CEILING_SIZE}",
                "cublas_tflops": cublas_tflops(flush, policy=policy),
                "fp32_nominal_peak_tflops": nominal_fp32_tflops(env)}

    def ceiling_rows(self, ceilings):
        from bench.families.matmul import report

        return report.ceiling_rows(ceilings)

    def report_sections(self, results):
        from bench.families.matmul import report

        from bench.families.matmul import suite_report

        out = []
        if "time" in results:
            out.append(report.section_time(results["time"], results.get("profile")))
            out.append(suite_report.section_suite(results["time"]))
        if "profile" in results:
            out.append(report.section_profile(results["profile"]))
            out.append(report.section_twins(results["profile"], results.get("time")))
            out.append(report.section_tensor_cores(results["profile"], results.get("time")))
        return out

    def summary_lines(self, results):
        from bench.families.matmul import report, suite_report

        suite_lines = suite_report.summary_lines(results["time"]) if "time" in results else []
        return report.summary_lines(results) + suite_lines

    def figures(self, results, out_dir):
        from bench.families.matmul import plots

        return plots.all_figures(results, out_dir)

    def caption(self, name):
        from bench.families.matmul import plots

        from bench.families.matmul import suite_report

        return suite_report.CAPTION if name == "suite" else plots.CAPTIONS.get(name)

    def readme_tables(self):
        from bench.families.matmul import report

        return report.readme_tables()


FAMILY = MatmulFamily()
