"""The Nsight Compute side, without ncu: the CSV parser on a stored sample, unit scaling,
summing the kernels of one launch, levels and the 2% target. CPU only."""
from __future__ import annotations

import math

import pytest

from bench import problems, profile, registry
from bench.families.matmul.models import MatmulShape
from tests.support import DATA

SAMPLE = DATA / "ncu_raw_sample.csv"


def test_parse_stored_sample():
    rows = profile.parse_ncu_csv(SAMPLE.read_text())
    assert [r["Kernel Name"] for r in rows] == ["matmul_v1_naive_kernel", "copy_kernel"]
    first = rows[0]
    assert first["smsp__sass_thread_inst_executed_op_global_ld.sum"] == 2_147_483_648
    assert first["dram__bytes_write.sum"] == 4_096_000          # Kbyte -> bytes
    assert first["gpu__time_duration.sum"] == pytest.approx(2_500_500)  # usecond -> ns
    assert math.isnan(rows[1]["smsp__sass_thread_inst_executed_op_global_ld.sum"])  # n/a


def test_sum_over_kernels_of_one_launch():
    total = profile.sum_kernels(profile.parse_ncu_csv(SAMPLE.read_text()))
    assert total["dram__bytes_read.sum"] == 12_582_912 + 1_000
    assert total["smsp__sass_thread_inst_executed_op_global_ld.sum"] == 2_147_483_648
    assert total["launches"] == 2
    assert total["kernels"] == "matmul_v1_naive_kernel;copy_kernel"


def test_parser_ignores_noise_and_empty():
    assert profile.parse_ncu_csv("==PROF== nothing profiled\n") == []


def test_unit_scale():
    assert profile.unit_scale("Mbyte") == 1e6
    assert profile.unit_scale("byte") == 1
    assert profile.unit_scale("msecond") == 1e6
    assert profile.unit_scale("Ksector") == 1e3
    assert profile.unit_scale("") == 1


def test_rejected_metric_names_are_found():
    log = "==ERROR== Failed to find metric sm__sass_data_bytes_mem_shared_op_ldsm\n"
    names = [m for m, _ in profile.METRICS]
    assert profile._rejected(log, names) == ["sm__sass_data_bytes_mem_shared_op_ldsm.sum"]


def _counters(**short):
    full = {s: m for m, s in profile.METRICS}
    return {full[k]: float(v) for k, v in short.items()}


def test_levels_and_target_pass_and_fail():
    k = registry.get("cuda_v1_naive")
    problem = problems.get("matmul")
    shape = MatmulShape(1024, 1024, 1024)
    model = k.traffic(shape)
    c = _counters(ld_thread_inst=model.global_loads, ld_warp_inst=model.global_loads / 32,
                  l1_bytes=35.5e9, l2_read_sectors=1e8, dram_read_bytes=12.6e6,
                  dram_write_bytes=4.2e6, ffma=model.fma, ncu_time_ns=5e6)
    lv = profile.levels(c, 4)
    assert lv["issued_elements"] == model.global_loads
    assert lv["l2_bytes"] == 32e8
    assert profile.compare(k, problem, lv, model)["target"] == "PASS"
    lv_bad = dict(lv, issued_elements=model.global_loads * 1.05)
    assert profile.compare(k, problem, lv_bad, model)["target"] == "FAIL"
    lv_ffma = dict(lv, ffma=model.fma - 1)
    assert profile.compare(k, problem, lv_ffma, model)["target"] == "FAIL"


def test_levels_fall_back_to_warp_instructions():
    lv = profile.levels(_counters(ld_warp_inst=10), 4)
    assert lv["issued_elements"] == 320 and "warp" in lv["level_note"]


def test_levels_count_async_copies():
    lv = profile.levels(_counters(ld_thread_inst=100, ldgsts_bytes=400, ld_data_bytes=400), 4)
    assert lv["issued_elements"] == 200 and lv["issued_bytes"] == 800


def test_profile_cli_without_ncu(monkeypatch, capsys):
    from bench import cli

    monkeypatch.setattr(profile, "find_ncu", lambda: None)
    assert cli.main(["profile", "--out", "/nonexistent"]) == 2     # nothing profiled: not ok
    err = capsys.readouterr().err
    assert "ncu" in err and "Traceback" not in err


def test_profile_cli_without_a_gpu(monkeypatch, capsys):
    from bench import cli, device

    monkeypatch.setattr(profile, "find_ncu", lambda: "/usr/bin/ncu")
    monkeypatch.setattr(device, "setup", lambda: "cpu")
    assert cli.main(["profile", "--out", "/nonexistent"]) == 2
    assert "needs a CUDA GPU" in capsys.readouterr().err


def test_counter_permission_error_says_what_to_ask_for(monkeypatch, tmp_path, capsys):
    """ncu's ERR_NVGPUCTRPERM (common on shared clusters) becomes one line that says what
    to ask an administrator for, and exit status 2."""
    import subprocess

    from bench import cli, device

    log = ("==PROF== Connected to process 123\n==ERROR== ERR_NVGPUCTRPERM - The user does not "
           "have permission to access NVIDIA GPU Performance Counters on the target device 0.")
    fake = subprocess.CompletedProcess([], 1, stdout=log, stderr="")
    monkeypatch.setattr(profile.subprocess, "run", lambda *a, **k: fake)
    with pytest.raises(profile.CounterPermissionError, match="administrator"):
        profile.run_ncu("ncu", "cuda_v1_naive", "64x64x64", "fp32", ["gpu__time_duration.sum"],
                        tmp_path / "rep")
    monkeypatch.setattr(profile, "find_ncu", lambda: "/usr/bin/ncu")
    monkeypatch.setattr(device, "setup", lambda: "cuda")
    monkeypatch.setattr(profile, "known_metrics", lambda ncu: None)
    from bench import env as env_mod
    monkeypatch.setattr(env_mod, "environment", lambda dev: {"device": dev})
    assert cli.main(["profile", "--kernels", "cuda_v1_naive", "--shapes", "64x64x64",
                     "--out", str(tmp_path / "p"), "--one-process-per-kernel"]) == 2
    err = [line for line in capsys.readouterr().err.strip().splitlines()
           if not line.startswith("[profile] ")]           # progress lines aside
    assert len(err) == 1 and "NVreg_RestrictProfilingToAdminUsers" in err[0]


def test_profile_run_checkpoints_after_every_kernel(monkeypatch, tmp_path):
    """A run cut short keeps its rows: run() hands the rows so far to the checkpoint."""
    from bench import profile, registry

    kernels = registry.select("cuda_v1_naive,cuda_v3_smem_tiling")
    monkeypatch.setattr(profile, "known_metrics", lambda ncu: None)
    monkeypatch.setattr(profile, "run_ncu",
                        lambda ncu, kernel, shape, precision, names, base: (None, [], "no ncu here"))
    monkeypatch.setattr(profile, "run_batch",
                        lambda ncu, items, names, base, timeout: ([None] * len(items), [], ""))
    seen = []
    rows, meta = profile.run(kernels, "64x64x64", None, tmp_path, ncu="ncu", progress=False,
                             checkpoint=lambda rows, meta: seen.append((len(rows), meta["partial"])))
    assert seen == [(1, True), (2, False)]
    assert [r["status"] for r in rows] == ["ERROR", "ERROR"]


def test_batch_rows_split_at_the_marker_kernels():
    rows = [{"Kernel Name": n} for n in (
        "cuda::<unnamed>::spin_kernel(long)", "a",
        "cuda::<unnamed>::spin_kernel(long)",                     # an item without a kernel
        "cuda::<unnamed>::spin_kernel(long)", "b1", "b2")]
    groups = profile.split_at_markers(rows)
    assert [[r["Kernel Name"] for r in g] for g in groups] == [["a"], [], ["b1", "b2"]]
    assert profile.item_status("x\nCVT_ITEM 0 ok\nCVT_ITEM 1 error: boom\n") == {
        0: "ok", 1: "error: boom"}


def test_profile_batch_first_then_own_process_for_what_failed(monkeypatch, tmp_path):
    """One ncu process for all items; an item the batch could not measure gets its own."""
    from bench import profile, registry

    kernels = registry.select("cuda_v1_naive,cuda_v3_smem_tiling")
    monkeypatch.setattr(profile, "known_metrics", lambda ncu: None)
    batch_items = []

    def fake_batch(ncu, items, names, base, timeout):
        batch_items.extend(items)
        return [{"gpu__time_duration.sum": 1e6, "kernels": "v1", "launches": 1}, None], [], ""

    alone = []

    def fake_one(ncu, kernel, shape, precision, names, base):
        alone.append(kernel)
        return {"gpu__time_duration.sum": 2e6, "kernels": "v3", "launches": 1}, [], ""

    monkeypatch.setattr(profile, "run_batch", fake_batch)
    monkeypatch.setattr(profile, "run_ncu", fake_one)
    rows, _ = profile.run(kernels, "64x64x64", None, tmp_path, ncu="ncu", progress=False)
    assert [k for k, _, _ in batch_items] == ["cuda_v1_naive", "cuda_v3_smem_tiling"]
    assert alone == ["cuda_v3_smem_tiling"]
    assert [r["ncu_time_ms"] for r in rows] == [1.0, 2.0]


def test_reference_kernels_are_not_profiled_by_default():
    from bench import registry

    assert {"cublas", "torch"} <= set(registry.REFERENCE_BACKENDS)
    assert any(k.backend == "torch" for k in registry.kernels())


def test_launch_properties_of_several_kernels_are_the_largest_not_the_sum():
    rows = [{"Kernel Name": "stage", "launch__registers_per_thread": 32.0,
             "smsp__inst_executed.sum": 10.0},
            {"Kernel Name": "gemm", "launch__registers_per_thread": 168.0,
             "smsp__inst_executed.sum": 90.0}]
    total = profile.sum_kernels(rows)
    assert total["launch__registers_per_thread"] == 168.0
    assert total["smsp__inst_executed.sum"] == 100.0
