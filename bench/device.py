"""Where kernels run: the GPU if there is one, else the CPU (Triton through its interpreter)."""
from __future__ import annotations

import contextlib
import os
import warnings


def has_gpu() -> bool:
    import torch

    return torch.cuda.is_available()


def setup() -> str:
    """Returns "cuda" or "cpu". Without a GPU, switches Triton to its interpreter; this must
    happen before any Triton kernel is defined, so call it before importing triton_impl."""
    if has_gpu():
        return "cuda"
    os.environ.setdefault("TRITON_INTERPRET", "1")
    interpreter_numpy_compat()
    return "cpu"


def interpreter_numpy_compat() -> None:
    """Triton 3.6's interpreter holds a scalar as a one-element array and turns it into a
    Python int with int(array) (a kernel's `range(0, K, BLOCK_K)`), which numpy 2.4 refuses
    for arrays of one dimension ("only 0-dimensional arrays can be converted to Python
    scalars"). Its patch of tl.tensor.__index__ is wrapped to take the element instead: the
    same value under any numpy. (Where numpy is older than 2.4, nothing changes.)"""
    try:
        from triton.runtime import interpreter
    except ImportError:
        return
    original = getattr(interpreter, "_patch_lang_tensor", None)
    if original is None or getattr(original, "cvt_numpy_compat", False):
        return

    def index(self):
        data = self.handle.data
        return int(data.reshape(-1)[0]) if getattr(data, "size", 0) == 1 else int(data)

    def patched(tensor, scope):
        original(tensor, scope)
        scope.set_attr(tensor, "__index__", index)

    patched.cvt_numpy_compat = True
    interpreter._patch_lang_tensor = patched


def gpu_capability() -> tuple[int, int] | None:
    """The compute capability of the current GPU ((9, 0) on the H100), or None without one."""
    import torch

    if not torch.cuda.is_available():
        return None
    return tuple(torch.cuda.get_device_capability())


def sm_name(capability) -> str:
    return f"sm_{capability[0]}{capability[1]}"


def can_run(kernel, device: str, precision: str | None = None,
            capability: tuple[int, int] | None = None) -> tuple[bool, str]:
    """Whether `kernel` can run on `device` (at `precision`, if given), and why not.
    On a GPU, the kernel's min_capability is compared with `capability` (default: this
    GPU's), so a Hopper-only kernel is skipped with its reason on an A100 or an L4."""
    if device == "cuda":
        have = capability or gpu_capability()
        need = tuple(getattr(kernel, "min_capability", (0, 0)))
        if have is not None and tuple(have) < need:
            what = getattr(kernel, "needs", "") or "a newer GPU"
            return False, (f"needs {sm_name(need)} or newer ({what}); this GPU is "
                           f"{sm_name(have)}")
        newest = getattr(kernel, "max_capability", None)
        if have is not None and newest is not None and tuple(have) > tuple(newest):
            what = getattr(kernel, "needs", "") or "an older GPU"
            return False, (f"runs on {sm_name(need)}"
                           + ("" if tuple(newest) == need else f" to {sm_name(newest)}")
                           + f" only ({what}); this GPU is {sm_name(have)}")
        return True, ""
    if not kernel.runs_on_cpu:
        return False, "needs a GPU"
    if kernel.backend == "triton" and precision == "bf16":
        # Measured with Triton 3.6 (docs/DESIGN.md, "Machines"): the interpreter's bf16
        # tl.dot returns garbage, and it converts float32 to bfloat16 by truncation where the
        # GPU rounds to nearest (one ulp more error), so a failure here would be the
        # interpreter's.
        return False, ("Triton interpreter: bf16 is wrong on the CPU (tl.dot returns garbage, "
                       "float32 -> bfloat16 truncates where the GPU rounds); runs on a GPU")
    return True, ""


@contextlib.contextmanager
def quiet_interpreter(device: str):
    """Hides the RuntimeWarnings that Triton's interpreter lets numpy print (a division or
    an overflow computed in masked-off lanes, whose results are never stored), and the
    interpreter's own DeprecationWarnings about numpy (shown under `-W always` or pytest),
    while a kernel runs on the CPU; on a GPU, nothing changes."""
    if device == "cuda":
        yield
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        warnings.filterwarnings("ignore", category=DeprecationWarning,
                                module=r"triton\.runtime\.interpreter")
        yield


def synchronize(device: str) -> None:
    """Waits for the GPU (a kernel's errors surface here); nothing to do on the CPU."""
    if device == "cuda":
        import torch

        torch.cuda.synchronize()


def l2_cache_bytes(default: int = 50 * 2**20) -> int:
    """The GPU's L2 size as torch reports it (50 MB on the H100), else `default`."""
    import torch

    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    return int(getattr(props, "L2_cache_size", 0) or default)


def poison_output_memory(nbytes: int, device: str) -> list[tuple[int, int]]:
    """Fills the memory an output of `nbytes` will land in with NaN, so that an element the
    kernel forgets to write is NaN and fails the check; returns the poisoned address ranges
    (start, size) for output_was_poisoned().

    On the GPU: a block of exactly this size is made and freed first (so that torch's caching
    allocator holds one to hand out), then EVERY free block of the allocator is filled
    (poison_free_memory): the output lands on poisoned memory even when the kernel's wrapper
    allocates a workspace of the same size before it, which would take the one block filled.
    On the CPU, whose allocator gives no such promise, every empty tensor is poisoned instead
    while the checks run (poisoned_cpu_allocations), and [] is returned."""
    if device != "cuda" or nbytes == 0:
        return []
    import torch

    block = torch.empty(nbytes, dtype=torch.uint8, device=device)
    del block
    return poison_free_memory()


def output_was_poisoned(out, ranges: list[tuple[int, int]], device: str) -> bool:
    """Whether the memory of `out` was poisoned before the kernel ran, i.e. on the GPU lies
    inside a range poison_output_memory filled (an output that landed elsewhere, on a block
    the allocator had to make, could hold an earlier right answer where the kernel writes
    nothing). On the CPU every uninitialised allocation a wrapper can make in Python (the
    empty factories) is poisoned at its source while checks run, and tensors from any other
    factory are written in full by it: True."""
    import torch

    if device != "cuda" or not isinstance(out, torch.Tensor) or out.numel() == 0:
        return True
    start = out.untyped_storage().data_ptr()
    end = start + out.untyped_storage().nbytes()
    return any(lo <= start and end <= lo + size for lo, size in ranges)


POISON_BYTE = 0xFF   # NaN in every float dtype; 255 in uint8, -1 in signed integers


def poison_free_memory() -> list[tuple[int, int]]:
    """Fill every free block of torch's caching allocator with POISON_BYTE (NaN in float32,
    float16 and bfloat16; 255 in uint8), and return their (address, size) ranges.

    compute-sanitizer's initcheck does not count TMA stores (cp.async.bulk.tensor from
    shared memory to global) as writes: t3's and t5's C, stored only that way, is reported
    as an uninitialized read wherever the allocator placed it on memory no other kernel had
    written (H100, 264x264x4104 bf16: 224 reads, every value right by the float64 check).
    Run once, a kernel leaves its output's block free in the allocator; filled, that block
    and every other free one count as written for initcheck, the second run's output lands
    on one of them, and an element the kernel does not write stays NaN, which the value
    check reports as wrong."""
    import torch

    class _Raw:   # a free block as a uint8 tensor without allocating it
        def __init__(self, address: int, size: int):
            self.__cuda_array_interface__ = {"shape": (size,), "typestr": "|u1",
                                             "data": (address, False), "version": 3}

    torch.cuda.synchronize()
    filled = []
    for segment in torch.cuda.memory_snapshot():
        for block in segment["blocks"]:
            if block["state"] == "inactive" and block["size"] > 0:
                free = torch.as_tensor(_Raw(block["address"], block["size"]), device="cuda")
                free.fill_(POISON_BYTE)
                filled.append((block["address"], block["size"]))
    torch.cuda.synchronize()
    return filled


# Every way Python code makes an uninitialised tensor: torch's functions, a tensor's methods.
_EMPTY_FACTORIES = (("torch", "empty"), ("torch", "empty_like"), ("torch", "empty_strided"),
                    ("Tensor", "new_empty"), ("Tensor", "new_empty_strided"))
_poisoning = 0


def _owner(name: str):
    import torch

    return torch if name == "torch" else torch.Tensor


def _poisoned_factory(original):
    import functools

    import torch

    @functools.wraps(original)
    def factory(*args, **kwargs):
        t = original(*args, **kwargs)
        if (type(t) is torch.Tensor and t.device.type == "cpu" and t.numel()
                and not t.requires_grad):
            with torch.no_grad():
                t.untyped_storage().fill_(POISON_BYTE)
        return t
    return factory


class poisoned_cpu_allocations:
    """While active, every CPU tensor made by torch.empty / empty_like / empty_strided or a
    tensor's new_empty / new_empty_strided starts filled with POISON_BYTE, so an output
    element a kernel (the Triton interpreter writes into CPU tensors) forgets to write is
    NaN and fails, whatever memory the CPU allocator hands back. Nests; restores torch's
    own functions on exit."""

    def __enter__(self):
        global _poisoning

        if _poisoning == 0:
            self._saved = {(o, n): getattr(_owner(o), n) for o, n in _EMPTY_FACTORIES}
            for (o, n), f in self._saved.items():
                setattr(_owner(o), n, _poisoned_factory(f))
        _poisoning += 1
        return self

    def __exit__(self, *exc):
        global _poisoning

        _poisoning -= 1
        if _poisoning == 0:
            for (o, n), f in self._saved.items():
                setattr(_owner(o), n, f)
        return False
