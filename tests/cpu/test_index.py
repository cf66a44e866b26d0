"""tests/INDEX.md, the tests of every kernel by tier, is current: regenerated here from the
collected test ids (tests/support/index.py), it equals the committed file."""
from __future__ import annotations

import difflib

from bench import registry
from tests.support import index


def test_the_index_of_tests_is_current():
    fresh = index.render(index.collect(), registry.kernels())
    stored = index.INDEX.read_text() if index.INDEX.exists() else ""
    diff = difflib.unified_diff(stored.splitlines(), fresh.splitlines(), "tests/INDEX.md",
                                "regenerated", lineterm="", n=0)
    assert fresh == stored, ("tests/INDEX.md is stale: run python -m tests.support.index\n"
                             + "\n".join(list(diff)[:40]))
