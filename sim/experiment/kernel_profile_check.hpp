#pragma once
// What a measured kernel profile (workloads/kernel_profile.hpp) may be applied to: the GPU it was
// measured on against the scenario's, and the rates its times give the trace's kernels.
//
// GPU identity, from a name as a profile writes it ("NVIDIA A100-SXM4-40GB", "NVIDIA H800",
// "AMD Instinct MI250X") or as luwusim names a GPU profile ("a100-40gb-sxm"): lower-cased,
// split at anything but letters and digits; the product is the first part of 1-3 letters and
// 2-4 digits with an optional letter (a100, h800, v100, mi250x, gh200; not sxm4), the memory a
// part of digits and "gb", the form factor "sxm..." or "pcie...".  Two names are of one GPU when
// their products agree and, where both give them, their memory and form factor.
#include <string>

#include "models/gpu.hpp"
#include "workloads/kernel_profile.hpp"
#include "workloads/trace.hpp"

namespace luwu::sim {

struct GpuIdentity {
  std::string product;  // "" when the name has none
  std::string memory;   // "40gb", or ""
  std::string form;     // "sxm", "pcie", or ""
};
GpuIdentity identify_gpu(const std::string& name);
// "" when the two may be one GPU, else what differs ("product h800 against a100").
std::string gpu_difference(const GpuIdentity& a, const GpuIdentity& b);

// The profile to time `gpu`'s kernels with (`gpu_name`: the scenario's GPU profile): the profile
// itself when it names no device or that GPU; for another GPU an InputError at the profile's
// deviceProperties, unless `allow_other_gpu`: then every duration is scaled by the two GPUs'
// ratio, peak FLOP/s at `dtype` for GEMM and attention kernels, HBM bandwidth for the others,
// from the shipped profile of the profiled GPU (an InputError when luwusim ships none), and
// `scaled_from` says so.
workloads::KernelProfile profile_for_gpu(const workloads::KernelProfile& profile, const std::string& gpu_name,
                                         const models::GpuSpec& gpu, workloads::DType dtype, bool allow_other_gpu,
                                         std::string* scaled_from);

// An InputError naming the profile, the trace kernel and its measured time when that time gives
// it more FLOP/s than the GPU's peak at the trace's dtype, or, moving more than 64 MB (beyond any
// GPU's L2), more bytes/s than its HBM: a profile of another model, another GPU or another unit.
void check_measured_rates(const workloads::Trace& trace, const models::GpuSpec& gpu, const std::string& profile_file);

}  // namespace luwu::sim
