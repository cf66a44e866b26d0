"""CPU tier: the documentation resolves. Every relative link of README.md and docs/ points
at a file that exists (and at a heading that exists, when it names one), every "docs/..."
path the product code cites exists, every section it cites by name ("docs/DESIGN.md,
"Tests, in tiers"") is a heading of that page, and nothing points outside the repository."""
from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CODE_DIRS = ("bench", "bindings", "triton_impl", "cuda", "tests", "docs")
CODE_FILES = ("Makefile", "CMakeLists.txt", "setup.py", "build_backend.py", "pyproject.toml",
              "pytest.ini", ".ci/run", ".ci/gpu.sh")
CODE_SUFFIXES = {".py", ".cu", ".cuh", ".h", ".cpp", ".sh", ".ipynb"}

LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
CITED = re.compile(r'\b(docs/[\w./-]*\w)(?:,?\s*\(?\\?"([^"\\]+)\\?")?')  # \" inside strings


def markdown_files() -> list[Path]:
    return [ROOT / "README.md"] + sorted((ROOT / "docs").rglob("*.md"))


def code_files() -> list[Path]:
    """Every source file that may cite a doc (this file, which names bad citations on
    purpose, excepted)."""
    files = [p for d in CODE_DIRS for p in (ROOT / d).rglob("*")
             if p.suffix in CODE_SUFFIXES and p.resolve() != Path(__file__).resolve()]
    return sorted(files) + [ROOT / f for f in CODE_FILES if (ROOT / f).exists()]


def _without_code_blocks(text: str) -> str:
    return re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)


def _without_code(text: str) -> str:
    """Prose only: no code blocks, no inline code (`kernel[grid](...)` is not a link)."""
    return re.sub(r"`[^`\n]*`", "", _without_code_blocks(text))


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    text = re.sub(r"[`*_]", "", heading.strip().lower()).replace("_", "")
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def headings(page: Path) -> list[str]:
    return [m.group(1).strip() for m in
            re.finditer(r"^#{1,6}\s+(.+)$", _without_code_blocks(page.read_text()), re.M)]


def _inside_repository(path: Path) -> bool:
    try:
        path.resolve().relative_to(ROOT)
        return True
    except ValueError:
        return False


def test_slug_follows_github():
    assert slug("Tests, in tiers") == "tests-in-tiers"
    assert slug("Why the v1.5 and v2 twins are 2× slower (SASS and ncu)") == \
        "why-the-v15-and-v2-twins-are-2-slower-sass-and-ncu"


def test_every_relative_link_of_the_docs_resolves():
    bad = []
    for page in markdown_files():
        for target in LINK.findall(_without_code(page.read_text())):
            if re.match(r"^[a-z]+:", target):          # http:, https:, mailto:
                continue
            path_part, _, anchor = target.partition("#")
            dest = (page.parent / path_part) if path_part else page
            where = f"{page.relative_to(ROOT)}: {target}"
            if not _inside_repository(dest):
                bad.append(f"{where} (outside the repository)")
            elif not dest.exists():
                bad.append(f"{where} (no such file)")
            elif anchor and dest.suffix == ".md" and anchor not in {slug(h) for h in headings(dest)}:
                bad.append(f"{where} (no heading with that anchor)")
    assert not bad, "broken links:\n" + "\n".join(bad)


def _joined_comments(text: str) -> str:
    """The text with comment continuations joined, so that a citation broken over two
    comment lines reads as one."""
    return re.sub(r"\s*\n\s*(?://|#)?\s*", " ", text)


def test_docs_cited_by_the_code_exist():
    bad = []
    for f in code_files() + markdown_files():
        text = _joined_comments(f.read_text())
        for path, section in CITED.findall(text):
            page = ROOT / path
            where = f"{f.relative_to(ROOT)}: {path}"
            if not page.exists():
                bad.append(f"{where} (no such file)")
            elif section and page.suffix == ".md" and section not in headings(page):
                bad.append(f'{where}, "{section}" (no such section)')
    assert not bad, "stale references to docs:\n" + "\n".join(bad)


def test_no_reference_to_a_design_map_outside_docs():
    """The design page is docs/DESIGN.md: a bare "DESIGN.md" in the code means another one."""
    bad = [f"{f.relative_to(ROOT)}:{n}" for f in code_files()
           for n, line in enumerate(f.read_text().splitlines(), 1)
           if re.search(r"(?<!docs/)\bDESIGN\.md", line)]
    assert not bad, "DESIGN.md cited without its folder (docs/DESIGN.md):\n" + "\n".join(bad)
