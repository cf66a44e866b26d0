"""The build backend of `pip install .` (PEP 517 and PEP 660), with no build dependencies.

pip builds a project in an isolated environment holding only what [build-system] requires
asks for, downloaded from an index. A GPU machine without a network cannot download
setuptools, so this backend requires nothing: it writes the wheel itself with the standard
library (a wheel is a zip file with three metadata files beside the code).

    pip install .                        the Python packages and the CUDA sources; the CUDA
                                         ops are built just in time on their first use
                                         (bindings.ops(): ninja, cached per user)
    pip install --no-build-isolation .   where the running Python's torch has CUDA and a
                                         toolkit is found, the ops are built now (setup.py
                                         build_ext) and the wheel carries bindings/_C*.so
    pip install -e .                     editable: a .pth file points at this checkout

What the wheel holds is read from pyproject.toml: [project] for the metadata, and
[tool.cuda-vs-triton.wheel] for the packages and the CUDA sources, which go inside the
bindings package (bindings/cuda/) since `cuda` is a namespace NVIDIA's Python packages use.
"""
from __future__ import annotations

import base64
import hashlib
import io
import os
import re
import subprocess
import sys
import sysconfig
import tarfile
import tempfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent
DIST = "cuda_vs_triton"
EXTENSION_GLOB = "_C*.so"
SKIP_DIRS = {"__pycache__", ".pytest_cache", "build"}


# ---------------------------------------------------------------------------------------
# pyproject.toml
# ---------------------------------------------------------------------------------------

def _load_toml(text: str) -> dict:
    try:
        import tomllib                                   # Python >= 3.11
    except ModuleNotFoundError:
        try:
            import tomli as tomllib                      # Python 3.10 with tomli installed
        except ModuleNotFoundError:
            raise RuntimeError("cuda-vs-triton: building needs Python >= 3.11 (tomllib) or "
                               "the tomli package on Python 3.10") from None
    return tomllib.loads(text)


def project() -> dict:
    return _load_toml((ROOT / "pyproject.toml").read_text())


def _wheel_config(config: dict) -> dict:
    return config["tool"]["cuda-vs-triton"]["wheel"]


def metadata(config: dict) -> str:
    """The METADATA file (core metadata 2.1) of the [project] table."""
    p = config["project"]
    lines = ["Metadata-Version: 2.1", f"Name: {p['name']}", f"Version: {p['version']}",
             f"Summary: {p['description']}", f"Requires-Python: {p['requires-python']}"]
    license_ = _wheel_config(config).get("license")
    if license_:
        lines.append(f"License: {license_}")
    for author in p.get("authors", []):
        lines.append(f"Author: {author['name']}")
    if p.get("keywords"):
        lines.append(f"Keywords: {','.join(p['keywords'])}")
    lines += [f"Classifier: {c}" for c in p.get("classifiers", [])]
    lines += [f"Requires-Dist: {d}" for d in p.get("dependencies", [])]
    for extra, deps in p.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        for d in deps:
            marker = f"extra == '{extra}'"
            lines.append(f"Requires-Dist: {d}; {marker}" if ";" not in d
                         else f"Requires-Dist: {d} and {marker}")
    readme = p.get("readme")
    if readme:
        lines.append("Description-Content-Type: text/markdown")
        return "\n".join(lines) + "\n\n" + (ROOT / readme).read_text()
    return "\n".join(lines) + "\n"


def entry_points(config: dict) -> str:
    scripts = config["project"].get("scripts", {})
    if not scripts:
        return ""
    return "[console_scripts]\n" + "".join(f"{k} = {v}\n" for k, v in scripts.items())


def _dist_info(config: dict) -> str:
    return f"{DIST}-{config['project']['version']}.dist-info"


# ---------------------------------------------------------------------------------------
# What goes in
# ---------------------------------------------------------------------------------------

def _walk(folder: Path):
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not SKIP_DIRS.intersection(path.relative_to(ROOT).parts):
            yield path


def package_files(config: dict) -> list[tuple[str, Path]]:
    """(path in the wheel, file here): the packages' .py files and package data, the CUDA
    sources placed inside the bindings package, and the labs inside the bench package."""
    wheel = _wheel_config(config)
    files = []
    for package in wheel["packages"]:
        files += [(p.relative_to(ROOT).as_posix(), p) for p in _walk(ROOT / package)
                  if p.suffix == ".py"]
    for pattern in wheel.get("package-data", []):
        files += [(p.relative_to(ROOT).as_posix(), p) for p in sorted(ROOT.glob(pattern))]
    into = wheel["sources-into"]
    for source in wheel.get("sources", []):
        base = ROOT / source
        files += [(f"{into}/{p.relative_to(base).as_posix()}", p) for p in _walk(base)
                  if p.suffix in (".cu", ".cuh", ".h", ".sh")]
    if wheel.get("labs"):          # the course labs, inside the bench package (bench/labs/)
        base = ROOT / wheel["labs"]
        files += [(f"{wheel['labs-into']}/{p.relative_to(base).as_posix()}", p)
                  for p in _walk(base) if p.suffix in (".md", ".py", ".toml", ".cu")]
    return files


def _torch_with_cuda() -> str | None:
    """Why the CUDA ops cannot be built now, or None if they can (torch with CUDA and a
    toolkit, importable from this Python: a build without isolation)."""
    try:
        import torch
        from torch.utils.cpp_extension import CUDA_HOME
    except ImportError:
        return "torch is not importable here (an isolated build)"
    if torch.version.cuda is None:
        return f"torch {torch.__version__} is a CPU-only build"
    if CUDA_HOME is None:
        return "no CUDA toolkit found (set CUDA_HOME)"
    return None


def build_extension(out: Path) -> list[tuple[str, Path]]:
    """Builds bindings/_C*.so into `out` with setup.py, when this Python can; else []."""
    reason = _torch_with_cuda()
    if reason is not None:
        print(f"cuda-vs-triton: the CUDA ops will be built just in time on first use "
              f"({reason}); `pip install --no-build-isolation .` builds them now",
              file=sys.stderr)
        return []
    subprocess.run([sys.executable, "setup.py", "build_ext", "--build-lib", str(out)],
                   cwd=ROOT, check=True, stdout=sys.stderr)
    built = sorted((out / "bindings").glob(EXTENSION_GLOB))
    arch = sorted((out / "bindings").glob("_C.arch"))
    return [(f"bindings/{p.name}", p) for p in built + arch]


# ---------------------------------------------------------------------------------------
# Writing a wheel
# ---------------------------------------------------------------------------------------

def _record_line(name: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def _tag(platform_specific: bool) -> str:
    if not platform_specific:
        return "py3-none-any"
    impl = f"cp{sys.version_info.major}{sys.version_info.minor}"
    plat = re.sub(r"[-.]", "_", sysconfig.get_platform())
    return f"{impl}-{impl}-{plat}"


def _write_wheel(directory: str, config: dict, files: list[tuple[str, bytes]],
                 platform_specific: bool = False) -> str:
    info = _dist_info(config)
    tag = _tag(platform_specific)
    name = f"{DIST}-{config['project']['version']}-{tag}.whl"
    meta = [(f"{info}/METADATA", metadata(config).encode()),
            (f"{info}/WHEEL", (f"Wheel-Version: 1.0\nGenerator: cuda-vs-triton build_backend\n"
                               f"Root-Is-Purelib: {'false' if platform_specific else 'true'}\n"
                               f"Tag: {tag}\n").encode())]
    if (ROOT / "LICENSE").exists():
        meta.append((f"{info}/LICENSE", (ROOT / "LICENSE").read_bytes()))
    eps = entry_points(config)
    if eps:
        meta.append((f"{info}/entry_points.txt", eps.encode()))
    entries = files + meta
    record = [_record_line(n, d) for n, d in entries] + [f"{info}/RECORD,,"]
    with zipfile.ZipFile(Path(directory) / name, "w", zipfile.ZIP_DEFLATED) as z:
        for n, d in entries:
            z.writestr(zipfile.ZipInfo(n, date_time=(2026, 1, 1, 0, 0, 0)), d,
                       compress_type=zipfile.ZIP_DEFLATED)
        z.writestr(f"{info}/RECORD", "\n".join(record) + "\n")
    return name


# ---------------------------------------------------------------------------------------
# PEP 517 / PEP 660 hooks
# ---------------------------------------------------------------------------------------

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def get_requires_for_build_editable(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    config = project()
    files = [(name, path.read_bytes()) for name, path in package_files(config)]
    with tempfile.TemporaryDirectory() as tmp:
        ext = build_extension(Path(tmp))
        files += [(name, path.read_bytes()) for name, path in ext]
    return _write_wheel(wheel_directory, config, files, platform_specific=bool(ext))


def build_editable(wheel_directory, config_settings=None, metadata_directory=None):
    """A wheel holding a .pth file that puts this checkout on sys.path: edits to the
    kernels, the harness and cuda/ take effect at once (cuda/ is found beside bindings/)."""
    config = project()
    return _write_wheel(wheel_directory, config, [(f"{DIST}.pth", f"{ROOT}\n".encode())])


def build_sdist(sdist_directory, config_settings=None):
    """The source tree as git tracks it (or, outside git, the folders a build needs)."""
    config = project()
    base = f"{DIST}-{config['project']['version']}"
    try:
        tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True,
                                 text=True, check=True).stdout.split()
    except (OSError, subprocess.CalledProcessError):
        tracked = [p.relative_to(ROOT).as_posix() for p in _walk(ROOT)
                   if not p.relative_to(ROOT).parts[0].startswith(".")]
    name = f"{base}.tar.gz"
    with tarfile.open(Path(sdist_directory) / name, "w:gz") as tar:
        for rel in tracked:
            if (ROOT / rel).is_file() and not rel.startswith("results/"):
                tar.add(ROOT / rel, arcname=f"{base}/{rel}")
        data = metadata(config).encode()
        pkg_info = tarfile.TarInfo(f"{base}/PKG-INFO")
        pkg_info.size = len(data)
        tar.addfile(pkg_info, io.BytesIO(data))
    return name


if __name__ == "__main__":      # python build_backend.py DIR: a wheel without pip
    out = sys.argv[1] if len(sys.argv) > 1 else "dist"
    os.makedirs(out, exist_ok=True)
    print(build_wheel(out))
