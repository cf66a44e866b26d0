"""CPU tier: the GPU path of `python -m bench report` (time, then profile, then figures),
run with the measurements replaced by stubs, so that a broken step of the GPU path fails
here and not after minutes on a GPU."""
from __future__ import annotations

from bench import check, device, perf, profile, registry, report
from bench import env as env_mod


def test_report_runs_every_gpu_step(monkeypatch, tmp_path):
    env = dict(env_mod.environment("cpu"), device="cuda", gpu="Stub GPU", note=None)
    monkeypatch.setattr(device, "setup", lambda: "cuda")
    monkeypatch.setattr(env_mod, "environment", lambda dev: dict(env))
    monkeypatch.setattr(check, "run", lambda *a, **k: [])
    monkeypatch.setattr(perf, "run", lambda kernels, shapes, policy=None: ([], dict(env), {}))
    monkeypatch.setattr(profile, "find_ncu", lambda: "ncu")
    profiled = {}

    def fake_profile(kernels, shapes, precisions, out, checkpoint=None, **kw):
        profiled["kernels"] = [k.name for k in kernels]
        return [], {"dropped_metrics": []}

    monkeypatch.setattr(profile, "run", fake_profile)
    assert report.run(tmp_path / "set", patterns="cuda_v3*,cublas,triton_copy,torch_copy") == 0
    assert profiled["kernels"] == ["cuda_v3_smem_tiling", "triton_copy"]   # no references
    assert all(registry.get(k).backend not in registry.REFERENCE_BACKENDS
               for k in profiled["kernels"])
    assert (tmp_path / "set" / "report.md").exists()
