"""setup.py — `pip install .` (offline: `python3 -m pip install . --no-build-isolation`, Debian's setuptools):
builds the CLI, the Python module and, where LibTorch is installed, the TorchScript plugin and runtime with this
project's CMake, and installs the package `flopwise` with the executables inside it (flopwise/bin/flopwise,
flopwise/lib/flopwise/: where the CLI looks for its plugin and runtime). `flopwise` the command comes with it
(an entry point that runs the bundled CLI). FLOPWISE_CMAKE_ARGS adds CMake options (e.g.
-DFLOPWISE_WITH_TORCH=OFF)."""

import os
import pathlib
import shlex
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = pathlib.Path(__file__).resolve().parent


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build = ROOT / "build-pip"
        subprocess.check_call(
            ["cmake", "-S", str(ROOT), "-B", str(build), "-DCMAKE_BUILD_TYPE=Release",
             "-DFLOPWISE_BUILD_TESTS=OFF", "-DFLOPWISE_BUILD_BENCH=OFF",
             f"-DFLOPWISE_PYTHON_EXECUTABLE={sys.executable}"]
            + shlex.split(os.environ.get("FLOPWISE_CMAKE_ARGS", "")))
        subprocess.check_call(["cmake", "--build", str(build), "-j", str(os.cpu_count() or 2)])
        pkg = pathlib.Path(self.get_ext_fullpath(ext.name)).parent
        pkg.mkdir(parents=True, exist_ok=True)
        for so in (build / "python" / "flopwise").glob("_flopwise*.so"):
            shutil.copy2(so, pkg / so.name)
        (pkg / "bin").mkdir(exist_ok=True)
        shutil.copy2(build / "flopwise", pkg / "bin" / "flopwise")
        lib = pkg / "lib" / "flopwise"
        for name in ("libflopwise_torch.so", "flopwise-runtime"):
            if (build / name).exists():
                lib.mkdir(parents=True, exist_ok=True)
                shutil.copy2(build / name, lib / name)
        (pkg / "_paths.py").write_text(
            "# Written by setup.py: the CLI installed inside this package (FLOPWISE_CLI overrides it).\n"
            "import os\n\nCLI = os.path.join(os.path.dirname(__file__), 'bin', 'flopwise')\n")


setup(
    name="flopwise",
    version="0.1.0",
    description="Static cost (params, MACs, FLOPs, memory) of ONNX and TorchScript models, by module scope",
    packages=["flopwise"],
    package_dir={"": "python"},
    ext_modules=[Extension("flopwise._flopwise", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    entry_points={"console_scripts": ["flopwise=flopwise.__main__:main"]},
    python_requires=">=3.9",
    zip_safe=False,
)
