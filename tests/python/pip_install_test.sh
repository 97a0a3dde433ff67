#!/bin/sh
# `pip install ./python` into a fresh venv, used from outside the repository: the package imports
# from the venv's site-packages, finds the profiles it carries, and simulates.  The venv sees the
# system's site packages (pandas, setuptools, wheel: CI has no PyPI) and reuses the module CTest's
# build already holds (LUWUSIM_BUILD_DIR), so that no second build runs; setup.py's CMake path is
# the same one CTest's build took.  Usage: pip_install_test.sh PYTHON VENV_DIR BUILD_DIR
set -eu
python=$1 venv=$2 build=$3
repository=$(cd "$(dirname "$0")/../.." && pwd)
rm -rf "$venv"
"$python" -m venv --system-site-packages "$venv"
LUWUSIM_BUILD_DIR="$build" "$venv/bin/pip" install --quiet --no-build-isolation --no-deps --no-index "$repository/python"
rm -rf "$repository/python/build" "$repository/python/luwusim.egg-info"
cd "$venv"
env -u LUWUSIM_PROFILE_DIR -u LUWUSIM_PRICES_DIR -u PYTHONPATH "$venv/bin/python" - <<'PY'
import os
import luwusim
package = os.path.dirname(luwusim.__file__)
assert package.startswith(os.environ["VIRTUAL_ENV"] if "VIRTUAL_ENV" in os.environ else os.getcwd()), package
assert os.environ["LUWUSIM_PROFILE_DIR"] == os.path.join(package, "data", "profiles"), os.environ["LUWUSIM_PROFILE_DIR"]
assert os.path.isfile(os.path.join(package, "data", "profiles", "a100-40gb-sxm.json"))
assert os.path.isdir(os.environ["LUWUSIM_PRICES_DIR"])
scenario = {"model": "gpt3-125m", "training": {"micro_batch": 1, "seq_len": 128},
            "cluster": {"topology": "luwu-star", "workers": 2, "network": "100Gb/s"}, "systems": ["ddp"]}
result = luwusim.run(scenario)
assert result["results"][0]["feasible"] and result["results"][0]["iteration_time_s"] > 0, result
frame = luwusim.run_frame(scenario)
assert list(frame["system"]) == ["ddp"], frame
print("pip-installed luwusim ran from", package)
PY
