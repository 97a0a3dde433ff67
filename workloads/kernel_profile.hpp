#pragma once
// Measured GPU kernels from a PyTorch profiler trace (Kineto's Chrome trace JSON), each classified
// by its name into the kinds luwusim's kernels have, so that kernel_times.hpp can put the measured
// durations in place of the analytic ones.
//
// Read: {"deviceProperties": [{"id": 0, "name": "NVIDIA A100-SXM4-40GB", ...}],
//        "traceEvents": [{"ph": "X", "cat": "kernel", "name": "...", "ts": us, "dur": us,
//        "args": {"device": 0, "stream": 7, "correlation": 123, ...}}, ...], ...}: complete events
// ("ph" "X") of category "kernel" (any case); every other event (CPU ops, runtime calls, memcpy
// and memset, flows) serves only to place kernels in profiler steps, and every other top-level
// key is ignored.  Kernels are put in launch order (by "ts", ties in file order).  All kernels
// must be of one device ("args.device", when given): a profile is one GPU's; its name is
// deviceProperties' entry of that id (or the only entry), "" when the profile names none.
//
// Profiler steps: a profile of several training steps (torch.profiler's schedule) marks each with
// a "ProfilerStep#N" event on the host.  A kernel belongs to the step whose window holds its
// launch (the runtime event of the same "correlation"; the kernel's own start when there is none).
// One step is used, KinetoOptions::step, or by default the median step (the step of median total
// kernel time, the earlier of two); kernels of other steps and outside every step are left out
// and counted.  A profile without step marks is used whole.
//
// Kind by name, lower-cased, the first rule that matches (names of cuBLAS, cuBLASLt, CUTLASS,
// cuDNN, FlashAttention, Triton, ROCm's Tensile and PyTorch's own kernels as they appear in
// profiles of A100, H100 and MI250 training runs):
//   communication  "nccl", "rccl", "deep_ep", "deepep", "all_reduce", "allreduce", "all_gather",
//                  "allgather", "reduce_scatter", "alltoall", "all_to_all"
//                                                            excluded: the training system issues its own
//   copy           "memcpy", "memset"                        excluded: not a kernel luwusim models
//   optimizer      "multi_tensor", "adam", "sgd", "optimizer" excluded: the system models the update
//   attention      "flash", "fmha", "attention", "attn"       (memory-efficient attention's CUTLASS
//                                                              kernel, fmha_cutlassF..., is attention)
//   elementwise    "transpose", "permute"                    (CUTLASS's and cuBLAS's layout kernels)
//   gemm           "gemm", "cutlass", "xmma", "cublas", "matmul", "wgmma", "cijk_" (Tensile),
//                  "hipblaslt", "ampere_", "volta_", "turing_", "hopper_", "sm70_", "sm75_",
//                  "sm80_", "sm86_", "sm89_", "sm90_"
//   elementwise    every other kernel: norms, activations, dropout, residual adds, softmax,
//                  embedding gathers, cross entropy, casts (memory-bound, as luwusim models them)
// and every kernel on a stream that runs a communication kernel is communication too (NCCL's
// and DeepEP's helper kernels run on their streams).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/json_input.hpp"
#include "workloads/kernels.hpp"

namespace luwu::workloads {

enum class ProfiledKind { Gemm, Attention, Elementwise, Communication, Optimizer, Copy };
std::string to_string(ProfiledKind);
ProfiledKind classify_kernel_name(const std::string& name);

struct ProfiledKernel {
  std::string name;
  ProfiledKind kind = ProfiledKind::Elementwise;
  double start_us = 0;
  double duration_s = 0;
  std::int64_t stream = -1;                 // args.stream, -1 when not given
  bool on_communication_stream = false;     // communication by its stream, not its name
};

// A host matrix multiply with its operands' shapes (args "Input Dims" of aten::mm, addmm, bmm,
// baddbmm, linear): C[m x n] = A[m x k] B[k x n]; linear's, mm's and addmm's leading dims folded
// into m, bmm's batch left out (as luwusim's attention kernels count it apart).
struct ProfiledGemm {
  std::string op;    // "aten::mm"
  std::string path;  // where its shapes were read: "$.traceEvents[12].args.Input Dims"
  std::int64_t m = 0, n = 0, k = 0;
};

// The multiply of host op `op` ("aten::addmm") from its operands' dims (an array of arrays, as
// Kineto's "Input Dims" and Chakra's inputs.shapes give them); none for another op or dims that do
// not make one.  `path` says where the op was read.
std::optional<ProfiledGemm> profiled_gemm(const std::string& op, const luwu::JsonNode& input_dims, const std::string& path);

struct KinetoOptions {
  int step = -1;  // the ProfilerStep# number to use; -1: the median step
};

struct KernelProfile {
  std::string file;
  std::string device_name;              // the GPU the kernels ran on, as the profile names it ("" if not)
  std::vector<ProfiledKernel> kernels;  // the step used, in launch order
  int steps = 0;                        // ProfilerStep# marks in the profile (0: used whole)
  int step_used = -1;                   // the number of the step whose kernels these are
  bool median_step = false;             // chosen as the median step
  std::size_t kernels_in_other_steps = 0;  // left out: other steps', and outside every step
  std::vector<ProfiledGemm> gemm_ops;      // the step's host matrix multiplies that give their shapes
};

// InputError naming the file and the JSON path ("$.traceEvents[12].dur") for a bad field, and for
// a step asked for that the profile does not mark.
KernelProfile kineto_profile_from_json(const luwu::JsonNode& root, const KinetoOptions& options = {});
KernelProfile load_kineto_profile(const std::string& file, const KinetoOptions& options = {});

}  // namespace luwu::workloads
