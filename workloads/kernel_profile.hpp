#pragma once
// Measured GPU kernels from a PyTorch profiler trace (Kineto's Chrome trace JSON), each classified
// by its name into the kinds luwusim's kernels have, so that kernel_times.hpp can put the measured
// durations in place of the analytic ones.
//
// Read: {"traceEvents": [{"ph": "X", "cat": "kernel", "name": "...", "ts": us, "dur": us,
//        "args": {"device": 0, "stream": 7, "correlation": 123, ...}}, ...], ...}: complete events
// ("ph" "X") of category "kernel" (any case) only; every other event (CPU ops, runtime calls,
// memcpy and memset, flows) and every other top-level key is ignored.  Kernels are put in launch
// order (by "ts", ties in file order).  All kernels must be of one device ("args.device", when
// given): a profile is one GPU's.
//
// Kind by name, lower-cased, the first rule that matches (names of cuBLAS, CUTLASS, FlashAttention
// and PyTorch's own kernels as they appear in profiles of A100 and H100 training runs):
//   communication  "nccl"                                    excluded: the training system issues its own
//   optimizer      "multi_tensor", "adam", "sgd", "optimizer" excluded: the system models the update
//   attention      "flash", "fmha", "attention", "attn"       (memory-efficient attention's CUTLASS
//                                                              kernel, fmha_cutlassF..., is attention)
//   gemm           "gemm", "cutlass", "xmma", "cublas", "matmul", "wgmma", "ampere_", "volta_",
//                  "turing_", "hopper_", "sm70_", "sm75_", "sm80_", "sm86_", "sm89_", "sm90_"
//   elementwise    every other kernel: norms, activations, dropout, residual adds, softmax,
//                  embedding gathers, cross entropy, casts (memory-bound, as luwusim models them)
#include <string>
#include <vector>

#include "common/json_input.hpp"
#include "workloads/kernels.hpp"

namespace luwu::workloads {

enum class ProfiledKind { Gemm, Attention, Elementwise, Communication, Optimizer };
std::string to_string(ProfiledKind);
ProfiledKind classify_kernel_name(const std::string& name);

struct ProfiledKernel {
  std::string name;
  ProfiledKind kind = ProfiledKind::Elementwise;
  double start_us = 0;
  double duration_s = 0;
};

struct KernelProfile {
  std::string file;
  std::vector<ProfiledKernel> kernels;  // in launch order
};

// InputError naming the file and the JSON path ("$.traceEvents[12].dur") for a bad field.
KernelProfile kineto_profile_from_json(const luwu::JsonNode& root);
KernelProfile load_kineto_profile(const std::string& file);

}  // namespace luwu::workloads
