"""CPU tier: the docs' numbers are generated from the result sets they name, never typed.
Every marked block of README.md and docs/ (`<!-- cvt:begin NAME set=results/... -->`,
bench/doc_blocks.py) must read exactly what `python -m bench docs` writes from its
committed set; a number edited by hand, or a set measured again without regenerating the
docs, fails here. The README stays a front door: at most 1,500 words."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from bench import cli, doc_blocks

ROOT = Path(__file__).resolve().parents[2]
README_WORDS = 1500


def test_every_block_matches_its_result_set():
    bad = doc_blocks.stale(ROOT)
    assert not bad, ("blocks that differ from their result sets (run `python -m bench docs`):\n"
                     + "\n".join(bad))


def test_the_readme_ladder_tables_are_generated_from_the_current_sets():
    text = (ROOT / "README.md").read_text()
    named = {(name, s) for name, s, *_ in doc_blocks.blocks(text)}
    assert {("result-set", "results/h100"), ("ffma-ladder", "results/h100"),
            ("tensor-rungs", "results/h100")} <= named


def test_the_kernel_tables_and_the_api_table_are_generated_from_the_registry():
    """docs/kernels.md's five tables and docs/api.md's are blocks bench docs writes from the
    records (bench/catalog/): a rung's rows follow from its record."""
    kernels_md = (ROOT / "docs" / "kernels.md").read_text()
    rows = {args.get("rows") for name, _s, _a, _b, _i, args in doc_blocks.blocks(kernels_md)
            if name == "kernel-table"}
    assert rows == {"ladder", "tensor-cores", "fast-triton", "shape-paths", "memory"}
    api = (ROOT / "docs" / "api.md").read_text()
    assert [name for name, *_ in doc_blocks.blocks(api)] == ["api-table"]


def _edit_one_number(text: str, name: str) -> str:
    """The page with the first decimal number inside block `name` changed."""
    (_, _, start, end, *_), = [b for b in doc_blocks.blocks(text) if b[0] == name][:1]
    m = re.search(r"\d+\.\d+", text[start:end])
    assert m, f"no number in block {name}"
    i = start + m.start()
    wrong = f"{float(m.group()) + 1:.{len(m.group().split('.')[1])}f}"
    return text[:i] + wrong + text[i + len(m.group()):]


def _copy_docs(tmp_path: Path) -> Path:
    """A repository of the docs and the result sets they name, to edit without harm."""
    for page in doc_blocks.doc_files(ROOT):
        dest = tmp_path / page.relative_to(ROOT)
        dest.parent.mkdir(parents=True, exist_ok=True)
        dest.write_text(page.read_text())
    (tmp_path / "results").symlink_to(ROOT / "results")
    return tmp_path


def test_a_number_typed_by_hand_fails_the_check_and_regenerating_restores_it(tmp_path):
    root = _copy_docs(tmp_path)
    readme = root / "README.md"
    good = readme.read_text()
    readme.write_text(_edit_one_number(good, "ffma-ladder"))
    assert doc_blocks.stale(root) == ["README.md: block ffma-ladder (results/h100)"]
    assert doc_blocks.fill(root) == [readme]
    assert readme.read_text() == good
    assert doc_blocks.stale(root) == []


def test_an_inline_number_is_checked_too(tmp_path):
    root = _copy_docs(tmp_path)
    page = root / "docs" / "performance" / "fast_matmul.md"
    page.write_text(_edit_one_number(page.read_text(), "cublas-ceilings"))
    assert doc_blocks.stale(root) == [
        "docs/performance/fast_matmul.md: block cublas-ceilings (results/h100)"]


def test_docs_check_exits_1_naming_the_block(tmp_path, monkeypatch, capsys):
    root = _copy_docs(tmp_path)
    readme = root / "README.md"
    readme.write_text(_edit_one_number(readme.read_text(), "tensor-rungs"))
    monkeypatch.setattr(doc_blocks, "ROOT", root)
    assert cli.main(["docs", "--check"]) == 1
    assert "README.md: block tensor-rungs (results/h100)" in capsys.readouterr().out


BAD_BLOCKS = [
    ("<!-- cvt:begin nonesuch set=results/h100 -->\nx\n<!-- cvt:end nonesuch -->",
     "no such block"),
    ("<!-- cvt:begin ffma-ladder -->\nx\n<!-- cvt:end ffma-ladder -->", "names no result set"),
    ("<!-- cvt:begin ffma-ladder set=results/nonesuch -->\nx\n<!-- cvt:end ffma-ladder -->",
     "not a result set"),
    ("<!-- cvt:begin ffma-ladder set=results/h100 -->\nx\n", "no end marker"),
    ("<!-- cvt:begin ratio set=results/h100 kernel=nonesuch precision=fp32 -->x"
     "<!-- cvt:end ratio -->", "no timing of nonesuch"),
    ("<!-- cvt:begin ratio set=results/h100 -->x<!-- cvt:end ratio -->", "kernel"),
    ("<!-- cvt:begin ratio set=results/h100 kernel=a,b -->x<!-- cvt:end ratio -->",
     "line 1: a marker not read as a block"),
    ("a\n<!-- cvt:end ffma-ladder -->", "line 2: a marker not read as a block"),
    ("<!-- cvt:begin ratio set=results/h100 kernel=cublas precision=fp32 timer=x -->x"
     "<!-- cvt:end ratio -->", "timer=x"),
]


# each case named by its message: an id made from the text would differ between pytest
# versions (how they escape "<!--" and newlines), and tests/INDEX.md with it
@pytest.mark.parametrize("text, message", [pytest.param(t, m, id=m) for t, m in BAD_BLOCKS])
def test_a_bad_block_is_named(text, message):
    with pytest.raises(doc_blocks.DocBlockError, match=message):
        doc_blocks.fill_text(text, ROOT / "README.md", ROOT)


def test_readme_is_a_front_door():
    """At most 1,500 words, counted as `wc -w` counts them (whitespace-separated)."""
    words = len((ROOT / "README.md").read_text().split())
    assert words <= README_WORDS, f"README.md has {words} words (at most {README_WORDS})"


# ---------------------------------------------------------------------------------------
# The renderers of committed sweep tables and of a set's ceilings, clocks and checks, on
# stand-in files: each number comes from the file, each bad argument is named
# ---------------------------------------------------------------------------------------

SWEEP = """#   rung  overrides         TF 4096  x cuBLAS
0   v4    (defaults)          37.94   x0.734
1   v4    -DCVT_V4_S=16       40.00   x0.774
4096^3 harness  0.3574  0.3820  0.937  1838/1901
| device copy bandwidth | 3007.1 GB/s | 4219.1 GB/s | 1.40 |
"""
SWEEP_CSV = "kernel,shape,tensor_active_pct\ncuda_t5_stream_k,4096x4096x4096,93.46\n"


def _stand_ins(tmp_path: Path) -> Path:
    """A repository of one stand-in result set (time, check and profile) and two stand-in
    sweep tables, a printed one and a CSV file."""
    from bench import results

    sweeps = tmp_path / "results" / "sweeps" / "standin"
    sweeps.mkdir(parents=True)
    (sweeps / "table.txt").write_text(SWEEP)
    (sweeps / "table.csv").write_text(SWEEP_CSV)
    s = tmp_path / "results" / "standin"
    s.mkdir()
    timed = dict(shape="4096x4096x4096", precision="fp32", status="ok")
    rows = [dict(timed, kernel="k", tflops=40.0, pct_reference=80.0, pct_roof=75.4,
                 sm_clock_mhz_before=1980, sm_clock_mhz=1700),
            dict(timed, kernel="cublas", tflops=50.0, pct_reference=100.0, pct_roof=97.0)]
    ceilings = {"copy_gbps": 3000.0, "cublas_tflops": {"fp32": 51.0}}
    payloads = {"time": {"meta": {"ceilings": ceilings}, "rows": rows},
                "check": {"rows": [{"status": "ok"}, {"status": "FAIL"}, {"status": "skip"}]},
                "profile": {"rows": [dict(timed, kernel="k", registers=128.0),
                                     dict(timed, kernel="cublas", registers=235.0)]}}
    for kind, payload in payloads.items():
        (s / f"{kind}.json").write_text(json.dumps(
            dict(payload, schema=results.SCHEMA, kind=kind, env={})))
    return tmp_path


def _render(root: Path, marker: str) -> str:
    name = marker.split()[0]
    text = f"x <!-- cvt:begin {marker} -->?<!-- cvt:end {name} --> y"
    filled = doc_blocks.fill_text(text, root / "README.md", root)
    return filled[len(text.split("-->")[0]) + 3:filled.index(f"<!-- cvt:end {name}")]


TABLE = "set=results/sweeps/standin/table.txt"


RENDERED = [
    (f"sweep-cell {TABLE} row=0 field=-1", "0.734"),
    (f"sweep-cell {TABLE} row=1 field=3", "40.00"),
    (f"sweep-cell {TABLE} row=0+1 field=-1", "0.734–0.774"),
    (f"sweep-cell {TABLE} line=4 field=4 digits=2", "0.94"),
    (f"sweep-cell {TABLE} line=4 field=5 part=1", "1901"),
    (f"sweep-cell {TABLE} line=5 field=2 digits=0", "4219"),
    ("sweep-cell set=results/sweeps/standin/table.csv row=cuda_t5_stream_k "
     "field=tensor_active_pct digits=0", "93"),
    ("ceiling set=results/standin of=copy", "3000 GB/s"),
    ("ceiling set=results/standin of=fp32", "51.0 TFLOP/s"),
    ("ridge set=results/standin precision=fp32", "17"),
    ("clock set=results/standin kernel=k precision=fp32", "1980 to 1700 MHz"),
    ("checks set=results/standin", "1 of 2"),
    ("roof-range set=results/standin kernels=k+cublas precision=fp32 shape=4096x4096x4096",
     "75–97"),
    ("counter-range set=results/standin kernels=k+cublas precision=fp32 metric=registers "
     "shape=4096x4096x4096", "128–235"),
]


# ids made of the block's name and the case's place: the text holds characters that
# pytest versions escape differently (tests/INDEX.md lists the ids)
@pytest.mark.parametrize("marker, text", [pytest.param(m, t, id=f"{m.split()[0]}-{i}")
                                          for i, (m, t) in enumerate(RENDERED)])
def test_a_block_renders_its_number_from_a_stand_in_file(tmp_path, marker, text):
    assert _render(_stand_ins(tmp_path), marker) == text


BAD_ARGUMENTS = [
    ("sweep-cell set=results/sweeps/standin/nonesuch.txt row=0 field=-1",
     "not a committed table under results/sweeps/"),
    ("sweep-cell set=results/standin/time.json row=0 field=-1", "not a committed table"),
    (f"sweep-cell {TABLE} row=7 field=-1", "0 rows start with '7'"),
    (f"sweep-cell {TABLE} row=0 line=2 field=-1", "row= or by line=, one of the two"),
    (f"sweep-cell {TABLE} line=99 field=0", "line=99"),
    (f"sweep-cell {TABLE} row=0 field=9", "has 5 fields, not field 9"),
    (f"sweep-cell {TABLE} row=0 field=tf", "field=tf: an index into the row"),
    (f"sweep-cell {TABLE} row=0 field=1", "field 'v4' is not a number"),
    (f"sweep-cell {TABLE} line=4 field=5 part=2", "part=2"),
    ("ceiling set=results/standin of=bf16", "of=bf16: copy or a precision"),
    ("clock set=results/standin kernel=cublas precision=fp32", "no SM clock of cublas"),
    ("counter-range set=results/standin kernels=k precision=fp32 metric=nonesuch "
     "shape=4096x4096x4096", "metric=nonesuch"),
    ("memory-targets set=results/standin what=met", "has no memory-bound targets"),
]


@pytest.mark.parametrize("marker, message", [pytest.param(m, msg, id=f"{m.split()[0]}-{i}")
                                             for i, (m, msg) in enumerate(BAD_ARGUMENTS)])
def test_a_bad_argument_of_a_block_is_named(tmp_path, marker, message):
    with pytest.raises(doc_blocks.DocBlockError, match=re.escape(message)):
        _render(_stand_ins(tmp_path), marker)


def test_the_memory_targets_of_the_committed_set_are_counted_as_the_report_counts_them():
    met = _render(ROOT, "memory-targets set=results/h100")
    noise = _render(ROOT, "memory-targets set=results/h100 what=noise")
    assert re.fullmatch(r"\d+ of \d+", met) and re.fullmatch(r"\d+ of the \d+", noise)
    with pytest.raises(doc_blocks.DocBlockError, match="what=all: met or noise"):
        _render(ROOT, "memory-targets set=results/h100 what=all")
