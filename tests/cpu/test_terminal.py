"""What the command line prints, as people read it (bench/terminal.py): tables that fit 100
columns with long notes under their rows, compact counts, and progress on stderr: a bar
redrawn in place on a terminal, plain lines at each tenth of the work on a log."""
from __future__ import annotations

import io

import pytest

from bench import terminal


def _widest(text: str) -> int:
    return max(len(line) for line in text.splitlines())


def test_a_long_note_goes_under_its_row_and_the_table_stays_narrow():
    note = "the last 6 columns (64-69) were never written; " * 5
    text = terminal.table(["kernel", "status"], [["k1", "FAIL"], ["k2", "ok"]],
                          notes=[note, ""])
    lines = text.splitlines()
    assert lines[0].split() == ["kernel", "status"] and lines[2].split() == ["k1", "FAIL"]
    assert all(line.startswith("    the") or line.startswith("    ") for line in lines[3:-1])
    assert lines[-1].split() == ["k2", "ok"]
    assert _widest(text) <= terminal.WIDTH


def test_cells_wider_than_a_line_are_cut_with_an_ellipsis():
    rows = [["x" * 70, "y" * 70, "3"]]
    text = terminal.table(["a", "b", "n"], rows, right={2})
    assert _widest(text) <= terminal.WIDTH
    assert "…" in text.splitlines()[2] and text.splitlines()[2].endswith("3")


def test_numbers_align_right():
    text = terminal.table(["kernel", "ms"], [["a", "1.5"], ["bb", "12.25"]], right={1})
    assert [line[-5:] for line in text.splitlines()[2:]] == ["  1.5", "12.25"]


@pytest.mark.parametrize("value, text", [
    (0, "0"), (4096, "4096"), (9999, "9999"), (16_777_216, "16.8 M"),
    (137_438_953_472, "137 G"), (2_147_483_648, "2.15 G"), (999_999, "1 M"),
    (None, "-"), (float("nan"), "-")])
def test_counts_are_compact(value, text):
    assert terminal.count(value) == text


def test_markdown_is_laid_out_for_the_terminal():
    md = ("# Title\n\n" + "A paragraph that goes on. " * 10 + "\n\n"
          "| kernel | ms |\n|---|---|\n| a \\| b | 1.5 |\n")
    text = terminal.from_markdown(md)
    assert text.startswith("# Title\n\n")
    assert text.splitlines()[-3:] == ["kernel  ms", "------  ---", "a | b   1.5"]
    assert _widest(text) <= terminal.WIDTH


# --------------------------------------------------------------------------- progress

def _log_progress(total: int, **kwargs) -> str:
    stream = io.StringIO()
    with terminal.Progress(total, "check", unit="runs", stream=stream, terminal=False,
                           **kwargs) as bar:
        for i in range(total):
            bar.start(f"kernel_{i} 17x13x7 fp32")
            bar.advance()
    return stream.getvalue()


def test_progress_on_a_log_is_a_line_at_each_tenth(monkeypatch):
    monkeypatch.setattr(terminal, "MIN_GAP_S", 0.0)
    text = _log_progress(100)
    lines = text.splitlines()
    assert "\r" not in text                                  # a log has no redrawn line
    assert lines[0] == "[check] 0/100 runs (0%), 0 s; now kernel_0 17x13x7 fp32"
    assert len(lines) == 11 and lines[-1] == "[check] 100 runs in 0 s"
    assert "[check] 50/100 runs (50%)" in text and "left; now kernel_50" in text
    assert _widest(text) <= terminal.WIDTH


def test_progress_on_a_log_is_never_a_flood():
    """Fast items (check's small shapes): at most one line a second, whatever the tenths."""
    lines = _log_progress(1000).splitlines()
    assert len(lines) <= 3 and lines[-1] == "[check] 1000 runs in 0 s"


def test_progress_can_be_switched_off():
    assert _log_progress(10, enabled=False) == ""


def test_kept_lines_carry_the_count_on_a_log():
    stream = io.StringIO()
    with terminal.Progress(2, "time", unit="timings", stream=stream, terminal=False) as bar:
        bar.start("cuda_v1_naive 1024x1024x1024 fp32")
        bar.advance()
        bar.log("cuda_v1_naive 1024x1024x1024 fp32: 1.2345 ms")
    assert "[time] 1/2 timings (50%)" in stream.getvalue()
    assert "cuda_v1_naive 1024x1024x1024 fp32: 1.2345 ms" in stream.getvalue()


def test_progress_on_a_terminal_redraws_in_place():
    """A bar (tqdm where installed, else one line) redrawn with carriage returns; a kept
    line printed above it; nothing of the bar left behind when the step ends."""
    stream = io.StringIO()
    with terminal.Progress(3, "check", unit="runs", stream=stream, terminal=True) as bar:
        for i in range(3):
            bar.start(f"kernel_{i}")
            bar.advance()
        bar.log("a line to keep")
    text = stream.getvalue()
    assert "\r" in text and "a line to keep\n" in text
    assert text.rstrip(" ").endswith("\r")                  # the bar is cleared at the end
