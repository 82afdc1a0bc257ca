"""Build hook: compiles libattnc.so with the project's CMake and puts it in
the package (attnc/_lib/libattnc.so). Metadata lives in pyproject.toml.

Environment:
  ATTNC_PREBUILT_LIBRARY  copy this libattnc.so instead of building one
  ATTNC_CMAKE_BUILD_DIR   CMake build directory to configure/reuse
                          (default: python/build/cmake; the repo's own build/
                          works too and makes the build incremental)
  ATTNC_CMAKE_ARGS        extra arguments for the configure step
  CMAKE_BUILD_PARALLEL_LEVEL  build jobs (default: the number of CPUs)
"""

import os
import shlex
import shutil
import subprocess
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

try:
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:  # setuptools < 70.1
    from wheel.bdist_wheel import bdist_wheel

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
TARGET = "attnc_shared"  # jit/CMakeLists.txt: OUTPUT_NAME attnc -> libattnc.so
LIBRARY = "libattnc.so"


def _run(command):
    print("attnc build:", " ".join(shlex.quote(str(c)) for c in command), flush=True)
    subprocess.run([str(c) for c in command], check=True)


def build_library() -> Path:
    """Builds (or finds) libattnc.so and returns its path."""
    prebuilt = os.environ.get("ATTNC_PREBUILT_LIBRARY")
    if prebuilt:
        path = Path(prebuilt)
        if not path.is_file():
            raise SystemExit(f"ATTNC_PREBUILT_LIBRARY={prebuilt} is not a file")
        return path
    if not (REPO / "CMakeLists.txt").is_file() or not (REPO / "runtime").is_dir():
        raise SystemExit(
            f"attnc: {REPO} is not the attnc source tree; build the package from "
            "a checkout (pip install ./python), or set ATTNC_PREBUILT_LIBRARY")
    cmake = shutil.which("cmake")
    if cmake is None:
        raise SystemExit("attnc: cmake not found (needed to build libattnc.so)")
    build_dir = Path(os.environ.get("ATTNC_CMAKE_BUILD_DIR", HERE / "build" / "cmake"))
    if not (build_dir / "CMakeCache.txt").is_file():
        configure = [cmake, "-S", REPO, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release",
                     "-DATTNC_BUILD_TESTS=OFF"]
        if shutil.which("ninja"):
            configure += ["-G", "Ninja"]
        configure += shlex.split(os.environ.get("ATTNC_CMAKE_ARGS", ""))
        _run(configure)
    jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 1))
    _run([cmake, "--build", build_dir, "--target", TARGET, "--parallel", jobs])
    for candidate in (build_dir / "lib" / LIBRARY, build_dir / LIBRARY):
        if candidate.is_file():
            return candidate
    found = sorted(build_dir.rglob(LIBRARY))
    if not found:
        raise SystemExit(f"attnc: the build did not produce {LIBRARY} under {build_dir}")
    return found[0]


class BuildPyWithLibrary(build_py):
    """build_py, then libattnc.so into <build_lib>/attnc/_lib/."""

    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            # An editable install finds the library in the build tree
            # (<repo>/build/lib) or through $ATTNC_LIBRARY.
            return
        source = build_library()
        destination = Path(self.build_lib) / "attnc" / "_lib"
        destination.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, destination / LIBRARY)
        print(f"attnc build: copied {source} -> {destination / LIBRARY}", flush=True)
        # attnc.torch_ops builds its C++ extension against the C API header.
        header = REPO / "runtime" / "include" / "attnc-c" / "Runtime.h"
        include = Path(self.build_lib) / "attnc" / "include" / "attnc-c"
        include.mkdir(parents=True, exist_ok=True)
        shutil.copy2(header, include / "Runtime.h")


class PlatformWheel(bdist_wheel):
    """Python-version independent (ctypes, no extension) but platform
    specific (it carries libattnc.so): py3-none-<platform>."""

    def finalize_options(self):
        super().finalize_options()
        self.root_is_pure = False

    def get_tag(self):
        _, _, platform = super().get_tag()
        return "py3", "none", platform


setup(cmdclass={"build_py": BuildPyWithLibrary, "bdist_wheel": PlatformWheel})
