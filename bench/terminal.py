"""What the command line prints, as people read it: tables that fit 100 columns on stdout,
progress on stderr.

Tables (`table`): columns padded to their widest cell, two spaces apart. A free-text
column (a failed check's diagnosis, a kernel's summary) does not widen the table: it is
passed as a note and printed on its own indented lines under its row. If the cells alone
are still wider than WIDTH, the widest columns are cut, with "…" where a cell lost its end.

Progress (`Progress`): on a terminal, a bar (tqdm when it is installed, else one line
redrawn in place) that says how far a step is and what runs now; elsewhere (a CI log,
`| tee`), a plain line at every tenth of the work, or every INTERVAL_S seconds if that
comes first, never more than one each MIN_GAP_S, so a log stays readable. Progress goes to stderr and the tables to stdout, so
`python -m bench check > table.txt` keeps the table alone.
"""
from __future__ import annotations

import math
import re
import sys
import textwrap
import time

WIDTH = 100          # columns of every table and of every progress line
NOTE_INDENT = "    "
ELLIPSIS = "…"
MIN_COLUMN = 6       # a column cut to fit keeps at least this many characters


# ---------------------------------------------------------------------------------------
# Tables
# ---------------------------------------------------------------------------------------

def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[:max(width - 1, 0)] + ELLIPSIS


def wrap(text: str, indent: str = NOTE_INDENT, width: int = WIDTH,
         hanging: str | None = None) -> str:
    """text as indented lines no longer than width (long words are broken)."""
    return "\n".join(textwrap.wrap(text, width=width, initial_indent=indent,
                                   subsequent_indent=hanging if hanging is not None else indent,
                                   break_on_hyphens=False)) or indent.rstrip()


def table(headers: list[str], rows: list[list], notes: list[str] | None = None,
          right: set[int] | frozenset = frozenset(), width: int = WIDTH) -> str:
    """A plain-text table no wider than `width`.

    notes: one text per row ("" for none), printed under its row, indented and wrapped.
    right: indices of the columns to align right (numbers)."""
    cells = [[str(c) for c in r] for r in rows]
    widths = [max([len(h)] + [len(r[i]) for r in cells]) for i, h in enumerate(headers)]
    # cut the widest column one character at a time until the table fits
    while sum(widths) + 2 * (len(widths) - 1) > width:
        i = max(range(len(widths)), key=lambda j: widths[j])
        if widths[i] <= MIN_COLUMN:
            break                     # more columns than a line holds: nothing sensible left
        widths[i] -= 1

    def line(values):
        out = [(_cut(v, w).rjust(w) if i in right else _cut(v, w).ljust(w))
               for i, (v, w) in enumerate(zip(values, widths))]
        return "  ".join(out).rstrip()

    text = [line(headers), line(["-" * w for w in widths])]
    for i, r in enumerate(cells):
        text.append(line(r))
        note = (notes or [""] * len(cells))[i]
        if note:
            text.append(wrap(note, width=width))
    return "\n".join(text)


def from_markdown(text: str, width: int = WIDTH) -> str:
    """Markdown (compare.md, ...) as a terminal shows it well: each table laid out by
    table(), every paragraph wrapped; headings and blank lines as they are."""
    out, block = [], []

    def cells(line: str) -> list[str]:
        parts = re.split(r"(?<!\\)\|", line.strip().strip("|"))
        return [c.strip().replace("\\|", "|") for c in parts]

    def flush():
        if block:
            rows = [cells(line) for line in block if not re.fullmatch(r"\|?[\s:|-]+\|?", line)]
            head, body = rows[0], [r + [""] * (len(rows[0]) - len(r)) for r in rows[1:]]
            out.append(table(head, body, width=width))
            block.clear()

    for line in text.splitlines():
        if line.lstrip().startswith("|"):
            block.append(line)
            continue
        flush()
        if not line.strip() or line.startswith("#"):
            out.append(line)
        else:
            lead = re.match(r"\s*(?:[-*] )?", line).group(0)
            out.append(wrap(line.strip(), indent="", width=width)
                       if not lead.strip() else
                       wrap(line[len(lead):], indent=lead, hanging=" " * len(lead),
                            width=width))
    flush()
    return "\n".join(out)


def count(x) -> str:
    """A count for a narrow column: exact below 10,000, else three significant digits with a
    decimal prefix (16,777,216 -> "16.8 M"; 137,438,953,472 -> "137 G"); "-" for none."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "-"
    x = float(x)
    if abs(x) < 10_000:
        return f"{x:.0f}"
    for prefix in ("k", "M", "G", "T", "P"):
        x /= 1000
        if abs(x) < 999.5 or prefix == "P":
            return f"{x:.3g} {prefix}"
    raise AssertionError("unreachable")


# ---------------------------------------------------------------------------------------
# Progress
# ---------------------------------------------------------------------------------------

INTERVAL_S = 15.0    # on a log: a line at least this often while items finish
MIN_GAP_S = 1.0      # ... and never more often than this, even at each tenth


def _seconds(s: float) -> str:
    s = max(s, 0.0)
    if s < 90:
        return f"{s:.0f} s"
    if s < 5400:
        return f"{s / 60:.0f} min"
    return f"{s / 3600:.1f} h"


def is_terminal(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):        # closed, or not a real file
        return False


class Progress:
    """Progress of one step of `total` items, on stderr.

        with Progress(len(work), "check", unit="runs") as bar:
            for item in work:
                bar.start(f"{kernel} {shape}")   # what runs now
                ...
                bar.advance()                    # one item done
                bar.log(line)                    # a line to keep (a timing), if any

    enabled=False prints nothing (a library call, a test that wants silence).
    """

    def __init__(self, total: int, step: str, unit: str = "items", stream=None,
                 enabled: bool = True, terminal: bool | None = None):
        self.total, self.step, self.unit = max(int(total), 0), step, unit
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = enabled and self.total > 0
        self.terminal = is_terminal(self.stream) if terminal is None else terminal
        self.done = 0
        self.now = ""
        self.t0 = time.monotonic()
        self._last_line = -math.inf      # when the last log line was printed
        self._last_tenth = 0
        self._bar = None
        self._drawn = 0                  # width of the line drawn in place (no tqdm)
        self._drawn_at = -math.inf
        if self.enabled and self.terminal:
            try:
                from tqdm import tqdm
            except ImportError:
                tqdm = None
            if tqdm is not None:
                # the size from shutil: a terminal that reports 0 x 0 (some CI runners'
                # pseudo-terminals) gets 100 x 24, where tqdm would draw nothing
                size = _terminal_size()
                self._bar = tqdm(total=self.total, desc=step, unit=" " + unit.rstrip("s"),
                                 file=self.stream, leave=False, ncols=min(WIDTH, size.columns),
                                 nrows=size.lines, mininterval=0.2)

    # -- what the caller says
    def start(self, item: str) -> None:
        """`item` runs now."""
        self.now = item
        if not self.enabled:
            return
        if self.terminal:
            self._draw()
        elif self._due():
            self._line()

    def advance(self, n: int = 1) -> None:
        """n more items are done."""
        self.done += n
        if not self.enabled:
            return
        if self.terminal:
            if self._bar is not None:
                self._bar.update(n)
            self._draw()

    def log(self, text: str) -> None:
        """A line the user keeps (a timing as it comes): above the bar on a terminal; on a
        log, after the count, so every line says how far the step is."""
        if not self.enabled:
            return
        if self.terminal:
            if self._bar is not None:
                self._bar.write(_fit(text), file=self.stream)
            else:
                self._clear()
                print(_fit(text), file=self.stream, flush=True)
                self._draw()
        else:
            self._last_line = time.monotonic()
            self._last_tenth = self._tenth()
            print(_fit(f"{self._count()}  {text}"), file=self.stream, flush=True)

    def close(self) -> None:
        if not self.enabled:
            return
        self.enabled = False
        if self._bar is not None:
            self._bar.close()
        elif self.terminal:
            self._clear()
        elapsed = time.monotonic() - self.t0
        if not self.terminal:
            print(f"[{self.step}] {self.done} {self.unit} in {_seconds(elapsed)}",
                  file=self.stream, flush=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    # -- how it is shown
    def _tenth(self) -> int:
        return 10 * self.done // self.total if self.total else 10

    def _due(self) -> bool:
        now = time.monotonic()
        if now - self._last_line < MIN_GAP_S:
            return False
        return self._tenth() > self._last_tenth or now - self._last_line >= INTERVAL_S \
            or self.done == 0 and self._last_line == -math.inf

    def _count(self) -> str:
        elapsed = time.monotonic() - self.t0
        text = (f"[{self.step}] {self.done}/{self.total} {self.unit} "
                f"({100 * self.done // self.total}%), {_seconds(elapsed)}")
        if 0 < self.done < self.total:
            text += f", ~{_seconds(elapsed / self.done * (self.total - self.done))} left"
        return text

    def _line(self) -> None:
        self._last_line = time.monotonic()
        self._last_tenth = self._tenth()
        print(_fit(f"{self._count()}; now {self.now}" if self.now else self._count()),
              file=self.stream, flush=True)

    def _draw(self) -> None:
        now = time.monotonic()
        if now - self._drawn_at < 0.1 and self.done < self.total:
            return                       # a redraw per item would cost more than the item
        self._drawn_at = now
        if self._bar is not None:
            self._bar.set_postfix_str(self.now, refresh=False)
            self._bar.refresh()
            return
        text = _cut(f"{self._count()}; now {self.now}" if self.now else self._count(),
                    min(WIDTH, _terminal_size().columns) - 1)
        text = text.ljust(self._drawn)       # over the longer line drawn before
        self.stream.write("\r" + text)
        self.stream.flush()
        self._drawn = len(text)

    def _clear(self) -> None:
        if self._drawn:
            self.stream.write("\r" + " " * self._drawn + "\r")
            self.stream.flush()
            self._drawn = 0


def _fit(text: str) -> str:
    return _cut(text, WIDTH)


def _terminal_size():
    import shutil

    return shutil.get_terminal_size((WIDTH, 24))
