#!/usr/bin/env bash
# Installs the Debian packages luwusim needs (only those missing, quietly) and builds it in
# Release into ./build, saying how far the build has come while it runs.  Safe to run again: it
# does nothing that is already done.
#   ./setup.sh          the luwusim binary only (what `luwusim run` needs)
#   ./setup.sh --all    every target: the tests, benches, the Python module, the validation kernels
#   LUWUSIM_BUILD_DIR   build folder (default: build)
#   LUWUSIM_CMAKE_ARGS  extra CMake arguments (e.g. -DLUWUSIM_SANITIZE=ON)
# The compiler's whole output, warnings included, stays in BUILD_DIR/build.log.
set -euo pipefail
cd "$(dirname "$0")"

targets=(--target luwusim)
what="luwusim"
case "${1:-}" in
  "") ;;
  --all) targets=(); what="every target" ;;
  *) echo "setup: unknown option ${1} (--all builds every target)" >&2; exit 2 ;;
esac

packages=(
  g++ cmake make pkg-config
  libsimgrid-dev          # the simulation engine
  libjemalloc-dev         # the allocator the simulating binaries link (CMakeLists.txt)
  libboost-graph-dev      # cluster graphs
  libprotobuf-dev protobuf-compiler   # Chakra .et traces (workloads/chakra_et.proto)
  nlohmann-json3-dev libfmt-dev libcli11-dev doctest-dev
  python3 python3-matplotlib   # plots, drawn with Debian's system Python
  python3-dev pybind11-dev python3-pandas   # the Python module (python/)
  python3-venv python3-setuptools python3-wheel   # pip install ./python, tested in a venv (tests/python)
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
echo "setup: configuring ${build_dir}/" >&2
# shellcheck disable=SC2086
cmake -S . -B "$build_dir" -DCMAKE_BUILD_TYPE=Release ${LUWUSIM_CMAKE_ARGS:-} >/dev/null
log="$build_dir/build.log"
start=$SECONDS
echo "setup: building ${what} with $(nproc) jobs (a clean build of luwusim takes minutes; of everything, about 15 on 2 cores)" >&2
cmake --build "$build_dir" -j "$(nproc)" "${targets[@]}" >"$log" 2>&1 &
build_pid=$!
while kill -0 "$build_pid" 2>/dev/null; do
  for _ in $(seq 30); do kill -0 "$build_pid" 2>/dev/null && sleep 1; done
  if kill -0 "$build_pid" 2>/dev/null; then
    done_pct=$(grep -o '^\[ *[0-9]*%\]' "$log" | tail -n 1 | tr -d '[] ' || true)
    echo "setup: building ${what}: ${done_pct:-starting} after $((SECONDS - start)) s" >&2
  fi
done
if ! wait "$build_pid"; then
  grep -E -A5 "error|Error" "$log" | head -60 >&2
  echo "setup: build failed after $((SECONDS - start)) s, full log in $log" >&2
  exit 1
fi
warnings=$(grep -c "warning:" "$log" || true)
echo "setup: built ${what} in $((SECONDS - start)) s; ${warnings} compiler warnings (in $log)" >&2
grep -E "warning:" "$log" >&2 || true
