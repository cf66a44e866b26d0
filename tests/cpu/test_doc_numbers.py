"""CPU tier: the docs' numbers are generated from the result sets they name, never typed.
Every marked block of README.md and docs/ (`<!-- cvt:begin NAME set=results/... -->`,
bench/doc_blocks.py) must read exactly what `python -m bench docs` writes from its
committed set; a number edited by hand, or a set measured again without regenerating the
docs, fails here. The README stays a front door: at most 1,500 words."""
from __future__ import annotations

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
