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
    return "cpu"


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


def poison_output_memory(nbytes: int, device: str) -> None:
    """Fills the allocator's next block of this size with NaN, so that an output the kernel
    allocates there starts as NaN and an element it forgets to write fails the check.
    (PyTorch's caching allocator hands a freed block of the same size straight back.)
    On the CPU, whose allocator gives no such promise, every empty tensor is poisoned
    instead while the checks run: see poisoned_cpu_allocations."""
    if device != "cuda" or nbytes == 0:
        return
    import torch

    block = torch.empty(nbytes, dtype=torch.uint8, device=device)
    block.fill_(0xFF)  # 0xFFFFFFFF / 0xFFFF are NaN in fp32, fp16 and bf16
    del block


POISON_BYTE = 0xFF   # NaN in every float dtype; 255 in uint8, -1 in signed integers


def poison_free_memory() -> None:
    """Fill every free block of torch's caching allocator with POISON_BYTE (NaN in float32,
    float16 and bfloat16; 255 in uint8).

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
    for segment in torch.cuda.memory_snapshot():
        for block in segment["blocks"]:
            if block["state"] == "inactive" and block["size"] > 0:
                free = torch.as_tensor(_Raw(block["address"], block["size"]), device="cuda")
                free.fill_(POISON_BYTE)
    torch.cuda.synchronize()


_EMPTY_FACTORIES = ("empty", "empty_like", "empty_strided")
_poisoning = 0


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
    """While active, every CPU tensor made by torch.empty / empty_like / empty_strided
    starts filled with POISON_BYTE, so an output element a kernel (the Triton interpreter
    writes into CPU tensors) forgets to write is NaN and fails, whatever memory the CPU
    allocator hands back. Nests; restores torch's own functions on exit."""

    def __enter__(self):
        global _poisoning
        import torch

        if _poisoning == 0:
            self._saved = {n: getattr(torch, n) for n in _EMPTY_FACTORIES}
            for n, f in self._saved.items():
                setattr(torch, n, _poisoned_factory(f))
        _poisoning += 1
        return self

    def __exit__(self, *exc):
        global _poisoning
        import torch

        _poisoning -= 1
        if _poisoning == 0:
            for n, f in self._saved.items():
                setattr(torch, n, f)
        return False
