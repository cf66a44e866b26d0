"""Closed-form traffic of the memory-bound kernels, in BYTES: what the threads read and write.

Every function is a pure function of the shape, the element size and (where it matters) the
kernel's parameters; nothing runs. A memory-bound kernel is judged by two numbers:

    compulsory  each input byte read once, each output byte written once: the floor any
                implementation must move, and what "achieved GB/s" divides by;
    model       what the kernel's threads actually ask for: the compulsory bytes plus every
                extra pass (the online softmax reads its input twice; PyTorch's eager
                ReLU + dropout writes and re-reads a temporary and writes a mask).

The ratio model / compulsory is the "extra passes" factor. Whether an extra pass costs DRAM
bandwidth depends on L2 (a re-read of data still in L2 does not): Nsight Compute's
dram__bytes_read.sum tells which (bench/profile.py records it next to the model).

Shapes are tensor shapes written like "4096x32768" (softmax adds ":dim=0" for a dimension
other than the last); see :class:`TensorShape`.
"""
from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from bindings.precision import element_bytes



@dataclass(frozen=True)
class TensorShape:
    """A tensor's shape, and for softmax the dimension it reduces (None: the last)."""

    dims: tuple[int, ...]
    dim: int | None = None

    @classmethod
    def parse(cls, text: str, allow_dim: bool = False) -> "TensorShape":
        """'4096x32768' -> (4096, 32768); '3000x3000:dim=0' -> (3000, 3000), dim 0; '7919'."""
        body, _, suffix = text.strip().lower().partition(":")
        parts = body.split("x")
        if not body or not all(p.strip().isdigit() for p in parts):
            raise ValueError(f"shape must be sizes joined by 'x' (e.g. 4096x32768), got {text!r}")
        dims = tuple(int(p) for p in parts)
        dim = None
        if suffix:
            if not allow_dim:
                raise ValueError(f"this op takes no ':dim=' suffix, got {text!r}")
            key, _, value = suffix.partition("=")
            if key.strip() != "dim" or not value.strip().lstrip("-").isdigit():
                raise ValueError(f"shape suffix must be ':dim=D', got {text!r}")
            dim = int(value)
            if not -len(dims) <= dim < len(dims):
                raise ValueError(f"dim {dim} out of range for a {len(dims)}-D shape in {text!r}")
            dim = dim % len(dims)
            if dim == len(dims) - 1:
                dim = None  # the last dimension is the default: one spelling per shape
        return cls(dims, dim)

    @classmethod
    def coerce(cls, shape) -> "TensorShape":
        """Any shape object whose text is sizes joined by 'x' (a MatmulShape "64x48x40" is the
        3-D tensor 64 x 48 x 40): lets a memory-bound model be evaluated at any shape."""
        return shape if isinstance(shape, cls) else cls.parse(str(shape), allow_dim=True)

    def __str__(self) -> str:
        text = "x".join(str(d) for d in self.dims)
        return text if self.dim is None else f"{text}:dim={self.dim}"

    @property
    def numel(self) -> int:
        return math.prod(self.dims)

    @property
    def reduced_dim(self) -> int:
        return len(self.dims) - 1 if self.dim is None else self.dim

    def around(self) -> tuple[int, int, int]:
        """(outer, n, inner): the contiguous tensor viewed as [outer, n, inner] around dim."""
        d = self.reduced_dim
        return math.prod(self.dims[:d]), self.dims[d], math.prod(self.dims[d + 1:])

    def image(self) -> tuple[int, int, int]:
        """(C, H, W) of an image shape: C x H x W, or H x W with C = 3."""
        if len(self.dims) == 2:
            return (3, *self.dims)
        if len(self.dims) == 3:
            return self.dims
        raise ValueError(f"an image shape is C x H x W or H x W, got {self}")


@dataclass(frozen=True)
class MemTraffic:
    """Bytes one launch moves, as the threads ask for them.

    read_bytes / write_bytes    global memory, every pass counted
    shared_read_bytes           shared-memory reads (CUDA's staged softmax row), else 0
    compulsory_*_bytes          each input once, the output once
    elem_bytes                  bytes per element of the main input (1 for uint8 images)
    passes                      times the input is read (1, or 2 for the online softmax)

    The matmul Traffic's element counts are provided for the harness's common tables:
    global_loads = read_bytes / elem_bytes etc.; there are no FMAs and no useful flops.
    """

    read_bytes: int
    write_bytes: int
    compulsory_read_bytes: int
    compulsory_write_bytes: int
    elem_bytes: int
    passes: int = 1
    shared_read_bytes: int = 0

    @property
    def global_load_bytes(self) -> int:
        return self.read_bytes

    @property
    def global_store_bytes(self) -> int:
        return self.write_bytes

    @property
    def shared_load_bytes(self) -> int:
        return self.shared_read_bytes

    @property
    def global_loads(self) -> int:
        return self.read_bytes // self.elem_bytes

    @property
    def global_stores(self) -> int:
        return self.write_bytes // self.elem_bytes

    @property
    def shared_loads(self) -> int:
        return self.shared_read_bytes // 4  # staged as float32

    fma = 0
    useful_flops = 0

    @property
    def compulsory_bytes(self) -> int:
        return self.compulsory_read_bytes + self.compulsory_write_bytes

    @property
    def model_bytes(self) -> int:
        return self.read_bytes + self.write_bytes

    @property
    def extra_factor(self) -> float:
        """model / compulsory: 1.0 for a single pass."""
        return self.model_bytes / self.compulsory_bytes if self.compulsory_bytes else 1.0

    def as_dict(self) -> dict:
        d = asdict(self)
        d.update(global_loads=self.global_loads, global_stores=self.global_stores,
                 shared_loads=self.shared_loads, fma=0, useful_flops=0,
                 global_load_bytes=self.global_load_bytes,
                 global_store_bytes=self.global_store_bytes,
                 shared_load_bytes=self.shared_load_bytes,
                 compulsory_bytes=self.compulsory_bytes, model_bytes=self.model_bytes,
                 extra_factor=self.extra_factor)
        return d


def _eb(p) -> int:
    return element_bytes(p["precision"])


def _stream(n: int, e: int, inputs: int, passes: int = 1) -> MemTraffic:
    """`inputs` tensors of n elements read `passes` times each, one of n elements written."""
    return MemTraffic(read_bytes=inputs * passes * n * e, write_bytes=n * e,
                      compulsory_read_bytes=inputs * n * e, compulsory_write_bytes=n * e,
                      elem_bytes=e, passes=passes)


def vector_add(shape, p) -> MemTraffic:
    """x + y: reads 2n, writes n. Compulsory = model = 3 n e."""
    return _stream(TensorShape.coerce(shape).numel, _eb(p), inputs=2)


def copy(shape, p) -> MemTraffic:
    """out = x: reads n, writes n. Compulsory = model = 2 n e."""
    return _stream(TensorShape.coerce(shape).numel, _eb(p), inputs=1)


def relu_dropout(shape, p) -> MemTraffic:
    """Fused ReLU + dropout: reads n, writes n (the random numbers are computed, not read)."""
    return _stream(TensorShape.coerce(shape).numel, _eb(p), inputs=1)


def relu_dropout_eager(shape, p) -> MemTraffic:
    """PyTorch eager F.dropout(F.relu(x)): relu reads n, writes a temporary of n; dropout
    reads the temporary, writes n and a one-byte mask of n. 4 n e + n against 2 n e."""
    n, e = TensorShape.coerce(shape).numel, _eb(p)
    return MemTraffic(read_bytes=2 * n * e, write_bytes=2 * n * e + n,
                      compulsory_read_bytes=n * e, compulsory_write_bytes=n * e,
                      elem_bytes=e, passes=2)


def softmax_sram(shape, p) -> MemTraffic:
    """Row (or column) kept on chip: one read, one write of N = outer * n * inner.
    p["staged"] = True (the CUDA twin) adds its two shared-memory sweeps: rows in their own
    type (float32 rows as float32, 16-bit rows packed), columns as float32."""
    s = TensorShape.coerce(shape)
    N, e = s.numel, _eb(p)
    t = _stream(N, e, inputs=1)
    if p.get("staged"):
        staged = e if s.reduced_dim == len(s.dims) - 1 else 4  # rows: their own type
        return MemTraffic(**{**asdict(t), "shared_read_bytes": 2 * N * staged})
    return t


def softmax_online(shape, p) -> MemTraffic:
    """Two passes over the input (running max and sum; output), one write: 3 N e requested,
    2 N e compulsory. The second read is an L2 hit when the rows in flight fit in L2.
    A row (dim = -1) of at most p["one_pass_n"] elements fits in one chunk of the kernel and
    is read once (2 N e); the CUDA twin's limit is p["one_pass_n_unaligned"] for rows that
    are not a multiple of 16 bytes (its scalar path moves 4 elements per thread, not 16 or
    64). Either limit may be a dict by element size (the CUDA twin's float32 and packed
    16-bit steps)."""
    s, e = TensorShape.coerce(shape), _eb(p)
    n = s.dims[s.reduced_dim]
    limit = p.get("one_pass_n", 0)
    if (n * e) % 16 and "one_pass_n_unaligned" in p:
        limit = p["one_pass_n_unaligned"]
    if isinstance(limit, dict):  # by element size
        limit = limit.get(e, 0)
    passes = 1 if s.dim is None and n <= limit else 2
    return _stream(s.numel, e, inputs=1, passes=passes)


def softmax_split(shape, p) -> MemTraffic:
    """A row split over several blocks (programs) that exchange their (max, sum): one read,
    one write of N, for rows of any length. p["staged"] = True (the CUDA twin: each slice
    copied into shared memory, then read by three sweeps: maximum, sum, output) adds 3 N e
    of shared-memory reads; the Triton twin keeps its segment in registers. The exchange's
    pairs (8 bytes per block or program and row) are left out."""
    s = TensorShape.coerce(shape)
    N, e = s.numel, _eb(p)
    t = _stream(N, e, inputs=1)
    if p.get("staged"):
        return MemTraffic(**{**asdict(t), "shared_read_bytes": 3 * N * e})
    return t


def rgb_to_grey(shape, p) -> MemTraffic:
    """3 planes of H x W bytes read, one written: 4 H W bytes, compulsory = model."""
    _c, h, w = TensorShape.coerce(shape).image()
    return MemTraffic(read_bytes=3 * h * w, write_bytes=h * w, compulsory_read_bytes=3 * h * w,
                      compulsory_write_bytes=h * w, elem_bytes=1)
