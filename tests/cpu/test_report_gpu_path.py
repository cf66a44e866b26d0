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
    timed = []

    def fake_time(kernels, shapes, policy=None, **kw):
        timed.append(([k.name for k in kernels], shapes, kw))
        return [], dict(env), {}

    monkeypatch.setattr(perf, "run", fake_time)
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
    assert len(timed) == 1          # no entry that picks per shape: no shape suite

    timed.clear()
    assert report.run(tmp_path / "set2", patterns="cuda_auto,triton_auto,cublas") == 0
    from bench.families.matmul import suite

    (_, default_shapes, _), (suite_kernels, suite_shapes, kw) = timed
    assert suite_kernels == ["cuda_auto", "triton_auto"]
    assert suite_shapes == {"matmul": suite.text()} and kw["measure_ceilings"] is False
    assert kw["suite"] == suite.NAME          # its rows say so: the ladder's figures skip them


def test_the_ladders_sections_leave_out_picking_entries_and_suite_rows():
    from bench.families.matmul.report import is_ladder_row

    assert is_ladder_row(dict(op="matmul", kernel="cuda_v7_lean_fetch"))
    assert is_ladder_row(dict(kernel="cublas"))                        # op defaults to matmul
    assert not is_ladder_row(dict(op="matmul", kernel="cuda_auto", choice="cuda_t5_stream_k"))
    assert not is_ladder_row(dict(op="matmul", kernel="cublas", suite="shapes"))
    assert not is_ladder_row(dict(op="matmul", kernel="cuda_split_k"))   # a path beside them
    assert not is_ladder_row(dict(op="softmax", kernel="cuda_softmax_online"))


def test_a_time_run_cut_short_keeps_its_checkpoint(monkeypatch, tmp_path):
    """`bench time` writes what it measured as it goes: a sweep stopped by a time limit
    leaves a set marked incomplete, not nothing."""
    import json

    import pytest

    from bench import cli

    env = dict(env_mod.environment("cpu"), device="cuda", gpu="Stub GPU", note=None)
    monkeypatch.setattr(device, "setup", lambda: "cuda")
    monkeypatch.setattr(env_mod, "environment", lambda dev: dict(env))
    row = dict(kernel="cuda_auto", shape="64x64x64", precision="bf16", status="ok",
               median_ms=0.01)

    def cut(kernels, shapes, precisions, policy, checkpoint=None, **kw):
        checkpoint([row], dict(env), {"copy_gbps": 1.0}, 1, 9)
        raise KeyboardInterrupt        # the limit strikes

    monkeypatch.setattr(perf, "run", cut)
    with pytest.raises(KeyboardInterrupt):
        cli.main(["time", "--kernels", "cuda_auto", "--shapes", "64x64x64",
                  "--out", str(tmp_path / "t")])
    saved = json.loads((tmp_path / "t" / "time.json").read_text())
    assert saved["rows"] == [row]
    assert saved["meta"]["incomplete"].startswith("1 of 9 timings")

    # a second run appended to it, finished or cut, still says the first was cut
    other = dict(row, precision="fp16")
    monkeypatch.setattr(perf, "run", lambda *a, **kw: ([other], dict(env), {"copy_gbps": 1.0}))
    monkeypatch.setattr(cli, "time_text", lambda rows, ceilings=None: "")
    cli.main(["time", "--kernels", "cuda_auto", "--shapes", "64x64x64", "--precision", "fp16",
              "--append", "--no-ceilings", "--out", str(tmp_path / "t")])
    saved = json.loads((tmp_path / "t" / "time.json").read_text())
    assert {r["precision"] for r in saved["rows"]} == {"bf16", "fp16"}
    assert saved["meta"]["incomplete"].startswith("an earlier run: 1 of 9 timings")
    # both commands recorded, the cut one first, and named in the set's README
    first, second = saved["meta"]["commands"]
    assert "--append" not in first and "--append" in second
    readme = (tmp_path / "t" / "README.md").read_text()
    assert f"`{first}`<br>`{second}`" in readme and "**Incomplete set.**" in readme
