"""The memory-bound kernels: CUDA, Triton twins, PyTorch references.

Five ops (bench/families/memory/problems.py): vector_add (Figure 5 of the lecture notes "GPU
Matmul and Operator Compilation"), copy and rgb_to_grey ("A Practitioner's Guide to
Triton"), relu_dropout and softmax over any dim (the notebook "GPUs and challenges in
programming them. Meet Triton"). Each has a CUDA kernel (cuda/<op>.cu, a `cvt` torch op)
and its Triton twin (triton_impl/<op>.py, a `cvt_triton` op); softmax has two versions
(row kept in SRAM; online, any length). The references are PyTorch eager (the first
"torch" record of an op: the one "% of reference" divides by) and torch.compile of the same
expression.

Deliberately wrong kernels: the Practitioner's Guide's two failed copies
(triton_impl/copy.py) and a softmax that flushes small probabilities to zero
(triton_impl/softmax.py), kept so the harness can show it catches them. Their names
contain "_bug_", their version is "bug1"/"bug2"/"bug-flush", their summary starts with
"DELIBERATELY WRONG"; registry.select leaves them out unless a pattern names a bug
("*_bug_*"), so `check`, `time`, `profile` and `report` never pick them by default.
"""
from __future__ import annotations

import importlib
from functools import lru_cache

from bench.families.memory import models as mm
from bench.families.memory.problems import PHILOX
from bench.registry import Kernel
from bindings import config
from bindings import precision as prec

FLOATS = prec.FLOATS


# --- loaders (nothing is imported or built until a kernel runs) ---------------------------

def _cuda(op_name: str):
    def load(precision: str):
        import bindings

        return getattr(bindings.ops(), op_name)

    return load


def _triton(module: str, *args):
    def load(precision: str):
        return importlib.import_module(f"triton_impl.{module}").op(*args)

    return load


def _triton_function(module: str, function: str):
    def load(precision: str):
        return getattr(importlib.import_module(f"triton_impl.{module}"), function)

    return load


# PyTorch expressions, as the documents the kernels come from write them.

def eager_vector_add(x, y):
    import torch

    return torch.add(x, y)


def eager_copy(x):
    return x.clone()


def eager_relu_dropout(x, p, seed):
    """The pytorch_relu_dropout of the notebook "Meet Triton": two kernels (relu, then
    dropout with its own generator: `seed` is not used, the mask differs from the twins',
    the statistics do not)."""
    import torch.nn.functional as F

    return F.dropout(F.relu(x), p=p, inplace=True)


def eager_softmax(x, dim):
    import torch

    return torch.softmax(x, dim)


def eager_rgb_to_grey(img):
    """The formula of "A Practitioner's Guide to Triton" in PyTorch, rounded as the kernels
    round."""
    import torch

    return (0.2989 * img[0] + 0.5870 * img[1] + 0.1140 * img[2] + 0.5).to(torch.uint8)


EAGER = {"vector_add": eager_vector_add, "copy": eager_copy, "relu_dropout": eager_relu_dropout,
         "softmax": eager_softmax, "rgb_to_grey": eager_rgb_to_grey}


def _eager(op: str):
    def load(precision: str):
        return EAGER[op]

    return load


class StaticCompile:
    """torch.compile of `fn`, specialised to one input signature at a time.

    One compiled object shared by every shape goes dynamic after its second shape: the
    graph then takes the sizes as arguments and the kernel Inductor generates for it is
    not the one a program with fixed shapes gets (measured on the H100: the shared object
    ran a 16M-element add at 5% of the copy bandwidth; docs/performance/memory_bound.md,
    "torch.compile reference rows"). A reference line
    should be the best torch.compile can do, so each new signature (shapes, dtypes,
    strides, scalar arguments) starts from a clean slate: torch._dynamo.reset(), then
    torch.compile(fn, dynamic=False). The first call at a signature compiles; the harness
    makes that call before timing (setup is never timed).
    """

    def __init__(self, fn):
        self.fn, self.signature, self.compiled = fn, None, None

    @staticmethod
    def _signature(args) -> tuple:
        import torch

        return tuple((tuple(a.shape), a.dtype, a.stride(), a.device) if isinstance(a, torch.Tensor)
                     else a for a in args)

    def __call__(self, *args):
        import torch

        signature = self._signature(args)
        if signature != self.signature:
            torch._dynamo.reset()
            self.compiled = torch.compile(self.fn, dynamic=False)
            self.signature = signature
        return self.compiled(*args)


@lru_cache(maxsize=None)
def compiled(op: str) -> StaticCompile:
    """torch.compile of the eager expression of `op`, static shapes (see StaticCompile)."""
    return StaticCompile(EAGER[op])


def _compiled(op: str):
    def load(precision: str):
        return compiled(op)

    return load


def _online_triton_params(precision=None) -> dict:
    """triton_impl/tiles.py's chunks of rows longer than 32768 (float32 shown as BLOCK,
    num_warps); rows of at most SRAM_MAX_N elements are one chunk, read once, whatever their
    type. tiles.py imports no Triton."""
    from triton_impl import tiles

    chunk, warps = tiles.SOFTMAX_ONLINE[4]
    return dict(BLOCK=chunk, num_warps=warps, one_pass_n=tiles.softmax()["SRAM_MAX_N"])


def _split_triton_params(precision=None) -> dict:
    """triton_impl/tiles.py's segments of the split (elements, num_warps, register cap) by
    element size; 16-bit rows of 16-byte multiples run the packed ones (SOFTMAX_SPLIT_PACKED),
    other 16-bit rows SOFTMAX_SPLIT's; on Hopper, long rows of multiples of 64 the
    shared-memory segments (SOFTMAX_SPLIT_SMEM: bytes, buffers, num_warps, from n)."""
    from triton_impl import tiles

    out = {}
    for e, (nbytes, buffers, warps, shortest) in tiles.SOFTMAX_SPLIT_SMEM.items():
        out.update({f"smem_bytes_{e}B": nbytes, f"smem_buffers_{e}B": buffers,
                    f"smem_num_warps_{e}B": warps, f"smem_from_n_{e}B": shortest})
    for e, (block, warps, cap) in tiles.SOFTMAX_SPLIT.items():
        out.update({f"BLOCK_{e}B": block, f"num_warps_{e}B": warps, f"maxnreg_{e}B": cap})
    for e, (block, warps, cap) in tiles.SOFTMAX_SPLIT_PACKED.items():
        out.update({f"BLOCK_{e}B_packed": block, f"num_warps_{e}B_packed": warps,
                    f"maxnreg_{e}B_packed": cap})
    return out


# --- parameters: read from cuda/memory_config.h, never copied ---------------------------

def _cuda_params(derive):
    """params: derive(h) of cuda/memory_config.h's values h (bindings/config.py), read
    lazily, under the names the records have always shown."""
    return lambda precision=None: derive(config.memory_params())


def _triton_params(twin: str, **names: str):
    """params: the twin's launch (triton_impl/tiles.py, which reads cuda/memory_config.h and
    imports no Triton), renamed: record name -> tiles key."""
    def params(precision=None):
        from triton_impl import tiles

        values = getattr(tiles, twin)()
        return {k: values[v] for k, v in names.items()}

    return params


def _online_cuda_params(h: dict) -> dict:
    """A row of at most one step (threads x elements in flight each) is read once, by element
    size: float32 16384 elements on the 16-byte path (1024 threads x 16), 4096 on the scalar
    path (rows not a multiple of 16 bytes: 1024 x 4); 16-bit rows, kept packed, 32768 (512
    threads x 128 bytes) and 2048 (512 x 4)."""
    packed = h["ONLINE_PACKED_THREADS"]
    return dict(threads=h["ONLINE_THREADS"], threads_16bit=packed,
                one_pass_n={4: h["ONLINE_THREADS"] * h["ONLINE_ELEMENTS"],
                            2: packed * h["ONLINE_PACKED_BYTES"] // 2},
                one_pass_n_unaligned={4: h["ONLINE_THREADS"] * h["ONLINE_SCALAR_UNROLL"],
                                      2: packed * h["ONLINE_SCALAR_UNROLL"]})


# --- records ---------------------------------------------------------------------------

def _longer_than_sram(shape) -> str:
    """Kernel.refuses of the row_sram pair: a row (column) longer than its shared memory."""
    n = mm.TensorShape.coerce(shape).around()[1]
    limit = config.memory_params()["SOFTMAX_SRAM_MAX_N"]
    return (f"rows of {n} elements: the row must fit shared memory (at most {limit}); "
            f"the online and split versions take it" if n > limit else "")


def _columns(shape) -> str:
    """Kernel.refuses of the split pair: softmax over a dimension other than the last."""
    s = mm.TensorShape.coerce(shape)
    return (f"dim {s.dim} of {'x'.join(map(str, s.dims))}: the split takes rows (the last "
            f"dimension); row_sram and online take columns" if s.dim is not None else "")


def _params(**values: int):
    return lambda precision=None: dict(values)


def _pair(op, version, cuda_summary, triton_summary, model, formula, cuda_loader,
          triton_loader, cuda_source, triton_source, cuda_params=None, triton_params=None,
          precisions=FLOATS, suffix="", refuses=None, cuda_needs=None, random_stream=""):
    """The CUDA kernel and its Triton twin. refuses, random_stream: both kernels' (Kernel);
    cuda_needs: (min_capability, needs) where the CUDA kernel needs more than the floor."""
    cuda_name, triton_name = f"cuda_{op}{suffix}", f"triton_{op}{suffix}"
    needs = dict(min_capability=cuda_needs[0], needs=cuda_needs[1]) if cuda_needs else {}
    return [
        Kernel(name=cuda_name, op=op, backend="cuda", version=version, summary=cuda_summary,
               source=cuda_source, precisions=precisions, loader=cuda_loader,
               params=cuda_params or _params(), model=model, twin=triton_name, formula=formula,
               refuses=refuses, random_stream=random_stream, **needs),
        Kernel(name=triton_name, op=op, backend="triton", version=version,
               summary=triton_summary, source=triton_source, precisions=precisions,
               loader=triton_loader, params=triton_params or _params(), model=model,
               twin=cuda_name, runs_on_cpu=True, formula=formula, refuses=refuses,
               random_stream=random_stream),
    ]


def _wrong(op, version, module, function, summary, model, formula, precisions=FLOATS,
           random_stream=""):
    """A deliberately wrong Triton kernel of `op`, kept to show that the check catches it:
    "_bug_" in its name, its version "bug...", its summary starting "DELIBERATELY WRONG";
    it claims what its right twin claims (random_stream)."""
    return Kernel(name=f"triton_{function}", op=op,
                  backend="triton", version=version, summary=summary,
                  source=f"triton_impl/{module}.py", precisions=precisions,
                  loader=_triton_function(module, function), model=model, runs_on_cpu=True,
                  formula=formula, random_stream=random_stream,
                  twin_note="deliberately wrong: kept to show that the check catches it")


def _references(op, eager_summary, precisions=FLOATS, eager_model=None):
    source = "bench/catalog/memory_bound.py"
    return [
        Kernel(name=f"torch_{op}", op=op, backend="torch", version="eager",
               summary=eager_summary, source=source, precisions=precisions, loader=_eager(op),
               model=eager_model, runs_on_cpu=True),
        Kernel(name=f"compile_{op}", op=op, backend="torch", version="compile",
               summary=f"torch.compile of the eager expression ({op}): Inductor's Triton kernel",
               source=source, precisions=precisions, loader=_compiled(op), model=None),
    ]


def records() -> list[Kernel]:
    wrong = "DELIBERATELY WRONG (attempt {} of \"A Practitioner's Guide to Triton\"): "
    return [
        *_pair("vector_add", "add",
               "out = x + y; 16-byte vectors, 4 in flight per thread, scalar tail",
               "the lecture's Figure 5 _add, masked store; 16-byte accesses after a run-time check",
               mm.vector_add, "reads 2n, writes n", _cuda("vector_add"),
               _triton("vector_add"), "cuda/vector_add.cu", "triton_impl/vector_add.py",
               _cuda_params(lambda h: dict(threads=h["ADD_THREADS"],
                                           vectors_per_thread=h["ADD_UNROLL"])),
               _triton_params("vector_add", num_warps="num_warps",
                              vectors_per_thread="VECTORS_PER_THREAD")),
        *_references("vector_add", "torch.add(x, y)", eager_model=mm.vector_add),

        *_pair("copy", "copy",
               "out = x; the bandwidth ceiling's kernel: 16-byte vectors, 4 in flight per thread",
               "copy of \"A Practitioner's Guide to Triton\": offsets = pid * BLOCK + "
               "arange(BLOCK); 16-byte accesses",
               mm.copy, "reads n, writes n", _cuda("copy"), _triton("copy"), "cuda/copy.cu",
               "triton_impl/copy.py",
               _cuda_params(lambda h: dict(threads=h["COPY_THREADS"],
                                           vectors_per_thread=h["COPY_UNROLL"])),
               _triton_params("copy", num_warps="num_warps",
                              vectors_per_thread="VECTORS_PER_THREAD")),
        _wrong("copy", "bug1", "copy", "copy_bug_offsets_ignore_pid", wrong.format(1) +
               "offsets = arange(BLOCK) ignore the program id", mm.copy, "reads n, writes n"),
        _wrong("copy", "bug2", "copy", "copy_bug_pid_times_n",
               wrong.format(2) + "offsets = pid * n + arange(BLOCK)", mm.copy,
               "reads n, writes n"),
        *_references("copy", "x.clone()", eager_model=mm.copy),

        *_pair("relu_dropout", "fused",
               "fused ReLU + dropout, Philox4x32-10 per 4 elements (Triton's tl.rand4x bits)",
               "the fused kernel of the notebook \"Meet Triton\" with tl.rand4x: same masks "
               "as the CUDA twin, bit for bit",
               mm.relu_dropout, "reads n, writes n", _cuda("relu_dropout"),
               _triton("relu_dropout"), "cuda/relu_dropout.cu", "triton_impl/relu_dropout.py",
               _cuda_params(lambda h: dict(threads=h["DROP_THREADS"],
                                           groups_per_thread=h["DROP_UNROLL"])),
               _triton_params("relu_dropout", num_warps="num_warps", BLOCK="BLOCK"),
               random_stream=PHILOX),
        _wrong("relu_dropout", "bug-tail-zeroed", "relu_dropout", "relu_dropout_bug_tail_zeroed",
               "DELIBERATELY WRONG: the fused kernel with its last partial block zeroed: right keep rate, wrong "
               "mask", mm.relu_dropout, "reads n, writes n", random_stream=PHILOX),
        *_references("relu_dropout", "F.dropout(F.relu(x), p, inplace=True): two kernels and a "
                     "mask", eager_model=mm.relu_dropout_eager),

        *_pair("softmax", "row_sram",
               "softmax over any dim, the row (column) in shared memory: one DRAM pass; "
               "16-bit rows in their own type",
               "the softmax of the notebook \"Meet Triton\", BLOCK = next_power_of_2(n), "
               "columns without a transpose",
               mm.softmax_sram, "reads N, writes N (n <= 32768)", _cuda("softmax_row_sram"),
               _triton("softmax", "row_sram"), "cuda/softmax_row_sram.cu",
               "triton_impl/softmax.py",
               _cuda_params(lambda h: dict(max_n=h["SOFTMAX_SRAM_MAX_N"], staged=True)),
               _triton_params("softmax", max_n="SRAM_MAX_N"), suffix="_row_sram",
               refuses=_longer_than_sram),
        *_pair("softmax", "online",
               "softmax over any dim, any length: online max and sum, backward pass; "
               "16-bit steps kept packed",
               "online softmax, per-lane running max and sum, backward pass; rows up to "
               "32768 read once",
               mm.softmax_online, "reads 2N, writes N", _cuda("softmax_online"),
               _triton("softmax", "online"), "cuda/softmax_online.cu", "triton_impl/softmax.py",
               _cuda_params(_online_cuda_params),
               _online_triton_params,
               suffix="_online"),
        *_pair("softmax", "split",
               "rows only, over a cluster of up to 8 blocks (16 past that; Hopper): slices "
               "in shared memory, (max, sum) via DSMEM",
               "rows only, over co-resident programs (a persistent grid): segments in "
               "registers, (max, sum) through global memory",
               mm.softmax_split, "reads N, writes N (rows split)", _cuda("softmax_split"),
               _triton("softmax_split"), "cuda/softmax_split.cu",
               "triton_impl/softmax_split.py",
               _cuda_params(lambda h: dict(staged=True, threads=h["SPLIT_THREADS"],
                                           slice_bytes=h["SPLIT_SLICE_BYTES"],
                                           max_cluster=h["SPLIT_AUTO_MAX_CLUSTER"])),
               _split_triton_params, suffix="_split", refuses=_columns,
               cuda_needs=((9, 0), "Hopper: thread-block clusters, distributed shared memory")),
        _wrong("softmax", "bug-flush", "softmax", "softmax_bug_flush_small",
               "DELIBERATELY WRONG: the online softmax with every output below 5e-4 of its "
               "row's maximum flushed to zero", mm.softmax_online, "reads 2N, writes N"),
        _wrong("softmax", "bug-sum-from-one", "softmax", "softmax_bug_sum_from_one",
               "DELIBERATELY WRONG: online softmax; one row in 1000 (index % 1000 == 1) divided by a sum "
               "started at 1, not 0", mm.softmax_online, "reads 2N, writes N"),
        *_references("softmax", "torch.softmax(x, dim)"),

        *_pair("rgb_to_grey", "grey",
               "uint8 3xHxW -> HxW grey; 2-D grid of 32x8 blocks, 16 pixels per thread",
               "2-D blocks and masks of \"A Practitioner's Guide to Triton\", 8 x 512 tiles, "
               "rounded to the nearest grey",
               mm.rgb_to_grey, "reads 3HW, writes HW bytes", _cuda("rgb_to_grey"),
               _triton("rgb_to_grey"), "cuda/rgb_to_grey.cu", "triton_impl/rgb_to_grey.py",
               _cuda_params(lambda h: dict(threads_x=h["GREY_BX"], threads_y=h["GREY_BY"],
                                           pixels_per_thread=h["GREY_PX"])),
               _triton_params("rgb_to_grey", BLOCK_H="BLOCK_H", BLOCK_W="BLOCK_W",
                              num_warps="num_warps"), precisions=("u8",)),
        _wrong("rgb_to_grey", "bug-tail-unwritten", "rgb_to_grey", "rgb_to_grey_bug_tail_unwritten",
               "DELIBERATELY WRONG: the grid rounds the columns down (w // BLOCK_W): the last partial block of "
               "columns is never written", mm.rgb_to_grey, "reads 3HW, writes HW bytes",
               precisions=("u8",)),
        *_references("rgb_to_grey", "0.2989 R + 0.5870 G + 0.1140 B in PyTorch: ~7 kernels",
                     precisions=("u8",)),
    ]
