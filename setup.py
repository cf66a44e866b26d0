"""Build and install cuda-vs-triton.

Where torch has CUDA and a CUDA toolkit is found, this builds the extension
``bindings._C`` (the kernels of cuda/ plus the torch ops of bindings/). Elsewhere it
installs the pure-Python parts (bench, triton_impl, bindings) and says in one line why
the extension was skipped. Works offline when torch is already installed:

    python setup.py build_ext --inplace          # in-place build, what `make` runs
    pip install --no-build-isolation .           # an installed copy

Honours TORCH_CUDA_ARCH_LIST (default "9.0", the H100) and MAX_JOBS (parallel ninja).
"""
import glob
import os
import sys

from setuptools import find_packages, setup

ROOT = os.path.dirname(os.path.abspath(__file__))


def extension_and_reason():
    try:
        import torch
        from torch.utils.cpp_extension import CUDA_HOME, BuildExtension, CUDAExtension
    except ImportError:
        return None, "torch is not installed"
    if torch.version.cuda is None:
        return None, f"torch {torch.__version__} is a CPU-only build"
    if CUDA_HOME is None:
        return None, "no CUDA toolkit found (set CUDA_HOME)"

    os.environ.setdefault("TORCH_CUDA_ARCH_LIST", "9.0")
    sys.path.insert(0, ROOT)
    from bindings import NVCC_FLAGS, cxx_flags  # one set of flags for setup.py and JIT
    from bindings._toolchain import use_safe_cxx

    use_safe_cxx()  # the bindings must share torch's libstdc++ (see bindings/_toolchain.py)

    sources = sorted(glob.glob("cuda/*.cu")) + sorted(glob.glob("bindings/*.cpp"))
    ext = CUDAExtension(
        name="bindings._C",
        sources=sources,
        include_dirs=[os.path.join(ROOT, "cuda")],
        extra_compile_args={"cxx": cxx_flags(), "nvcc": NVCC_FLAGS},
    )
    return (ext, BuildExtension.with_options(use_ninja=True)), None


built, reason = extension_and_reason()
if built is None:
    print(f"cuda-vs-triton: skipping the CUDA extension: {reason}; installing the Python parts only")
    ext_modules, cmdclass = [], {}
else:
    ext_modules, cmdclass = [built[0]], {"build_ext": built[1]}

setup(
    name="cuda-vs-triton",
    version="0.1.0",
    description="Hand-written CUDA and Triton kernels side by side, with one harness that "
    "checks them and measures, plots and explains their memory traffic and throughput.",
    packages=find_packages(include=["bench", "bench.*", "triton_impl", "triton_impl.*",
                                    "bindings", "bindings.*"]),
    package_data={"bindings": ["*.cpp"]},
    python_requires=">=3.10",
    ext_modules=ext_modules,
    cmdclass=cmdclass,
)
