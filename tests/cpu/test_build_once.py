"""CPU tier: the GPU tier's shared CMake build (tests/support/build_once.py) runs once per
test run, whatever the number of workers asking for it, and again in a new run."""
from __future__ import annotations

import threading

from tests.support.build_once import STAMP, build_once


def test_one_build_per_run_across_workers(tmp_path):
    calls = []
    workers = [threading.Thread(target=build_once, args=(tmp_path, lambda: calls.append(1), "run-a"))
               for _ in range(8)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert len(calls) == 1 and (tmp_path / STAMP).read_text() == "run-a"
    assert build_once(tmp_path, lambda: calls.append(1), "run-b")       # a new run builds
    assert len(calls) == 2


def test_a_failed_build_leaves_no_stamp_and_no_run_id_always_builds(tmp_path):
    def broken():
        raise RuntimeError("cmake failed")

    try:
        build_once(tmp_path, broken, "run-a")
    except RuntimeError:
        pass
    assert not (tmp_path / STAMP).exists()
    assert build_once(tmp_path, lambda: None, "run-a")                 # tried again
    assert build_once(tmp_path, lambda: None, "")                      # no xdist: build
