#!/bin/sh
# The checks that need an NVIDIA GPU, on a machine that has CUDA and PyTorch but not the
# simulator's dependencies (SimGrid, Boost, fmt): builds the CUDA optimizer step's test and bench
# straight from their sources with nvcc and g++, runs them, then measures the GPU's kernel rates
# (bench/gpu_rates.py) and one transformer block's forward and backward (bench/gpu_block.py).  DOCTEST_DIR names a folder holding doctest/doctest.h where the machine
# has none.
#   bench/gpu_check.sh OUTDIR
set -eu
out=${1:?usage: bench/gpu_check.sh OUTDIR}
mkdir -p "$out"
build=$(mktemp -d)
arch=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
inc="-I. ${DOCTEST_DIR:+-I$DOCTEST_DIR}"
cudalib=$(dirname "$(dirname "$(command -v nvcc)")")/lib64
echo "building the CUDA step for sm_$arch" >&2
nvcc -std=c++17 -O3 -arch=sm_$arch -I. -c validation/adam_cuda.cu -o "$build/adam_cuda.o"
for f in validation/adam_step.cpp validation/adam_kernel_scalar.cpp validation/adam_kernel_avx2.cpp \
         validation/adam_kernel_avx512.cpp; do
  g++ -std=c++20 -O2 -I. -c "$f" -o "$build/$(basename "$f" .cpp).o"
done
g++ -std=c++20 -O2 $inc -DLUWUSIM_HAVE_CUDA=1 -o "$build/adam_cuda_test" tests/validation/adam_cuda_test.cpp \
  tests/doctest_main.cpp "$build"/*.o -L"$cudalib" -lcudart
g++ -std=c++20 -O2 -I. -DLUWUSIM_HAVE_CUDA=1 -o "$build/adam_cuda_bench" bench/adam_cuda_bench.cpp \
  "$build"/*.o -L"$cudalib" -lcudart
LD_LIBRARY_PATH="$cudalib:${LD_LIBRARY_PATH:-}" "$build/adam_cuda_test" -s 2>&1 | tee "$out/adam_cuda_test.log"
LD_LIBRARY_PATH="$cudalib:${LD_LIBRARY_PATH:-}" "$build/adam_cuda_bench" | tee "$out/adam_cuda_bench.jsonl"
python3 bench/gpu_rates.py "$out"
python3 bench/gpu_block.py "$out/block.json"
