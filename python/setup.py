"""The compiled part of the luwusim module, built by the repository's own CMake project.

`pip install ./python` runs this: CMake configures the repository (one folder up) for the Python
running pip (-DPython3_EXECUTABLE), builds the target luwusim_python in a private build folder
(every library: about 7 minutes on 2 cores), and copies `_luwusim` into the package with the
shipped profiles (models/profiles) and price lists (models/prices) under luwusim/data, where the
package points LUWUSIM_PROFILE_DIR and LUWUSIM_PRICES_DIR unless they are set.

LUWUSIM_BUILD_DIR=build reuses a build folder that already holds the module for this Python's ABI
(what `./setup.sh --all` made; a relative path is the repository's, as pip runs this from
python/); otherwise nothing of it is touched.
"""
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent.parent


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        target = Path(self.get_ext_fullpath(ext.name)).resolve()
        module = "_luwusim" + sysconfig.get_config_var("EXT_SUFFIX")
        reused = os.environ.get("LUWUSIM_BUILD_DIR")
        built = (ROOT / reused).resolve() / "python" / "luwusim" / module if reused else None
        if built is None or not built.is_file():
            if reused:
                print(f"luwusim: {built} is not there (another Python's ABI?); building", file=sys.stderr)
            build_dir = Path(self.build_temp).resolve() / "cmake"
            subprocess.run(["cmake", "-S", str(ROOT), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release",
                            f"-DPython3_EXECUTABLE={sys.executable}"], check=True)
            subprocess.run(["cmake", "--build", str(build_dir), "--target", "luwusim_python",
                            "-j", str(os.cpu_count() or 2)], check=True)
            built = build_dir / "python" / "luwusim" / module
            if not built.is_file():
                raise RuntimeError(f"luwusim: CMake built no {built}: are pybind11-dev and this Python's headers there?")
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(built, target)
        for data in ("profiles", "prices"):
            shutil.copytree(ROOT / "models" / data, target.parent / "data" / data, dirs_exist_ok=True)


setup(packages=["luwusim"],
      ext_modules=[Extension("luwusim._luwusim", sources=[])],
      cmdclass={"build_ext": CMakeBuild})
