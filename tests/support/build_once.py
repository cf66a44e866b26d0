"""A build that the pytest-xdist workers of one run share (tests/gpu/conftest.py's
cmake_build): the first worker builds under a file lock and leaves a stamp naming the run;
the others find the stamp and use the build without running the build tool again.

Without the stamp every worker re-ran `cmake --build` after the first had released the
lock; where such a rebuild is not a no-op, the linker rewrites a driver that another worker
may be executing. That is the likely cause of one GPU run's PermissionError (EACCES) on
build/pytest-cmake/matmul_driver, in a test that started while other workers still asked
for the build. A new run (another PYTEST_XDIST_TESTRUNUID, or no xdist) builds again: an
up-to-date build is a no-op, a changed source rebuilds."""
from __future__ import annotations

import fcntl
import os
from pathlib import Path
from typing import Callable

STAMP = ".built-by-run"


def build_once(build: Path, build_fn: Callable[[], None], run_id: str | None = None) -> bool:
    """Runs build_fn under build/.lock unless this run has built already; True if it ran."""
    run_id = run_id if run_id is not None else os.environ.get("PYTEST_XDIST_TESTRUNUID", "")
    build.mkdir(parents=True, exist_ok=True)
    stamp = build / STAMP
    with open(build / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if run_id and stamp.exists() and stamp.read_text() == run_id:
            return False
        stamp.unlink(missing_ok=True)      # a failed build leaves no stamp
        build_fn()
        if run_id:
            stamp.write_text(run_id)
        return True
