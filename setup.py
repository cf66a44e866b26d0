"""Builds the CUDA ops: the extension ``bindings._C`` (the kernels of cuda/ plus the torch
ops of bindings/), where torch has CUDA and a CUDA toolkit is found.

    python setup.py build_ext --inplace          # in-place build, what `make` runs

Installing goes through pyproject.toml (`pip install .`): its build backend
(build_backend.py) runs this file to build the extension when torch with CUDA is
importable (`pip install --no-build-isolation .`) and ships the sources for a just-in-time
build otherwise. Where the extension cannot be built, this says in one line why.

Architectures: TORCH_CUDA_ARCH_LIST when set; else the GPUs of this machine; else
bindings/_toolchain.DEFAULT_ARCH_LIST (no GPU visible). The list used is written beside the
extension (bindings/_C.arch), so that bindings.ops() can tell a build made for another GPU
and rebuild for this one. MAX_JOBS sets ninja's parallel jobs.
"""
import glob
import os
import sys

from setuptools import setup

ROOT = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, ROOT)


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

    from bindings import NVCC_FLAGS, cxx_flags  # one set of flags for setup.py and JIT
    from bindings import _toolchain

    _toolchain.use_safe_cxx()  # the bindings must share torch's libstdc++ (_toolchain.py)
    archs, why = _toolchain.arch_list()
    _toolchain.use_arch_list()
    print(f"cuda-vs-triton: building the CUDA ops for {archs} ({why})")

    class BuildWithArchFile(BuildExtension):
        """torch's build_ext, then the arch list written beside the library it built."""

        def run(self):
            super().run()
            for ext in self.extensions:
                folder = os.path.dirname(self.get_ext_fullpath(ext.name))
                with open(os.path.join(folder, _toolchain.ARCH_FILE), "w") as fh:
                    fh.write(archs + "\n")

    sources = sorted(glob.glob("cuda/*.cu")) + sorted(glob.glob("bindings/*.cpp"))
    ext = CUDAExtension(
        name="bindings._C",
        sources=sources,
        include_dirs=[os.path.join(ROOT, "cuda")],
        extra_compile_args={"cxx": cxx_flags(), "nvcc": NVCC_FLAGS},
    )
    return (ext, BuildWithArchFile.with_options(use_ninja=True)), None


built, reason = extension_and_reason()
if built is None:
    print(f"cuda-vs-triton: skipping the CUDA extension: {reason}")
    ext_modules, cmdclass = [], {}
else:
    ext_modules, cmdclass = [built[0]], {"build_ext": built[1]}

# The metadata is pyproject.toml's [project] table (setuptools reads it); the packages are
# named here so that setuptools does not go looking for them in this flat layout.
setup(
    packages=["bench", "bindings", "triton_impl"],
    ext_modules=ext_modules,
    cmdclass=cmdclass,
)
