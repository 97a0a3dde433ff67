#!/usr/bin/env bash
# Installs the Debian packages luwusim needs (only those missing, quietly) and builds it in
# Release into ./build.  Safe to run again: it does nothing that is already done.
#   LUWUSIM_BUILD_DIR   build folder (default: build)
#   LUWUSIM_CMAKE_ARGS  extra CMake arguments (e.g. -DLUWUSIM_SANITIZE=ON)
set -euo pipefail
cd "$(dirname "$0")"

packages=(
  g++ cmake make pkg-config
  libsimgrid-dev          # the simulation engine
  libjemalloc-dev         # the allocator the simulating binaries link (CMakeLists.txt)
  libboost-graph-dev      # cluster graphs
  nlohmann-json3-dev libfmt-dev libcli11-dev doctest-dev
  python3 python3-matplotlib   # plots, drawn with Debian's system Python
  python3-dev pybind11-dev python3-pandas   # the Python module (python/)
  slurm-wlm munge         # sweep --slurm, tested against a single-node Slurm (tests/slurm/)
  graphviz                # topology drawings
  clang libclang-rt-14-dev   # libFuzzer, for the fuzz targets CI runs (fuzz/)
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq >/dev/null
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

build_dir="${LUWUSIM_BUILD_DIR:-build}"
# shellcheck disable=SC2086
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release ${LUWUSIM_CMAKE_ARGS:-} >/dev/null
log="$build_dir/build.log"
if ! cmake --build "$build_dir" -j "$(nproc)" >"$log" 2>&1; then
  grep -E -A5 "error|Error" "$log" | head -60 >&2
  echo "setup: build failed, full log in $log" >&2
  exit 1
fi
grep -E "warning:" "$log" >&2 || true
