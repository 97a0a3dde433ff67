#include "validation/adam_cuda.hpp"

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

namespace luwu::validation {

namespace {

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) throw std::runtime_error(std::string("CUDA: ") + what + ": " + cudaGetErrorString(e));
}

template <bool kFp16>
__global__ void adam_kernel(AdamStepScalars s, float* master, float* m, float* v, const unsigned short* grads,
                            unsigned short* out, size_t n) {
  for (size_t i = blockIdx.x * static_cast<size_t>(blockDim.x) + threadIdx.x; i < n;
       i += static_cast<size_t>(gridDim.x) * blockDim.x) {
    float g = kFp16 ? __half2float(__ushort_as_half(grads[i])) : __bfloat162float(__ushort_as_bfloat16(grads[i]));
    float p = master[i];
    g = fmaf(s.l2_weight_decay, p, g);
    const float mi = fmaf(s.beta1, m[i], __fmul_rn(s.one_minus_beta1, g));
    const float vi = fmaf(s.beta2, v[i], __fmul_rn(__fmul_rn(s.one_minus_beta2, g), g));
    const float denominator = fmaf(__fsqrt_rn(vi), s.inv_sqrt_bias_correction2, s.epsilon);
    const float decay = -__fmul_rn(s.decoupled_decay, p);
    p = __fadd_rn(p, fmaf(-s.step_size, __fdiv_rn(mi, denominator), decay));
    m[i] = mi;
    v[i] = vi;
    master[i] = p;
    out[i] = kFp16 ? __half_as_ushort(__float2half_rn(p)) : __bfloat16_as_ushort(__float2bfloat16_rn(p));
  }
}

unsigned grid_for(size_t n) { return static_cast<unsigned>(n / 256 + 1 < 65535 ? n / 256 + 1 : 65535); }

// The step's five arrays in HBM, freed however the step ends (a failed CUDA call throws).
struct DeviceState {
  size_t count = 0;
  float *master = nullptr, *m = nullptr, *v = nullptr;
  unsigned short *grads = nullptr, *out = nullptr;

  explicit DeviceState(size_t n) : count(n) {
    try {
      check(cudaMalloc(&master, float_bytes()), "cudaMalloc");
      check(cudaMalloc(&m, float_bytes()), "cudaMalloc");
      check(cudaMalloc(&v, float_bytes()), "cudaMalloc");
      check(cudaMalloc(&grads, half_bytes()), "cudaMalloc");
      check(cudaMalloc(&out, half_bytes()), "cudaMalloc");
    } catch (...) {
      release();
      throw;
    }
  }
  ~DeviceState() { release(); }
  DeviceState(const DeviceState&) = delete;
  DeviceState& operator=(const DeviceState&) = delete;

  size_t float_bytes() const { return count * sizeof(float); }
  size_t half_bytes() const { return count * sizeof(unsigned short); }
  void launch(const AdamStepScalars& s, HalfFormat format) {
    if (format == HalfFormat::fp16)
      adam_kernel<true><<<grid_for(count), 256>>>(s, master, m, v, grads, out, count);
    else
      adam_kernel<false><<<grid_for(count), 256>>>(s, master, m, v, grads, out, count);
    check(cudaGetLastError(), "kernel launch");
  }

 private:
  void release() {
    cudaFree(master);
    cudaFree(m);
    cudaFree(v);
    cudaFree(grads);
    cudaFree(out);
  }
};

// CUDA events, destroyed however the timing ends.
struct EventPair {
  cudaEvent_t start = nullptr, stop = nullptr;
  EventPair() {
    check(cudaEventCreate(&start), "cudaEventCreate");
    if (cudaEventCreate(&stop) != cudaSuccess) {
      cudaEventDestroy(start);
      throw std::runtime_error("CUDA: cudaEventCreate");
    }
  }
  ~EventPair() {
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
  }
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
};

}  // namespace

bool cuda_device_available() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

void adam_step_cuda(const AdamStepScalars& s, HalfFormat format, const AdamSlice& x) {
  if (!cuda_device_available()) throw std::runtime_error("CUDA: no device");
  DeviceState d(x.count);
  check(cudaMemcpy(d.master, x.master, d.float_bytes(), cudaMemcpyHostToDevice), "copy in");
  check(cudaMemcpy(d.m, x.m, d.float_bytes(), cudaMemcpyHostToDevice), "copy in");
  check(cudaMemcpy(d.v, x.v, d.float_bytes(), cudaMemcpyHostToDevice), "copy in");
  check(cudaMemcpy(d.grads, x.gradients, d.half_bytes(), cudaMemcpyHostToDevice), "copy in");
  d.launch(s, format);
  check(cudaMemcpy(x.master, d.master, d.float_bytes(), cudaMemcpyDeviceToHost), "copy out");
  check(cudaMemcpy(x.m, d.m, d.float_bytes(), cudaMemcpyDeviceToHost), "copy out");
  check(cudaMemcpy(x.v, d.v, d.float_bytes(), cudaMemcpyDeviceToHost), "copy out");
  check(cudaMemcpy(x.params_out, d.out, d.half_bytes(), cudaMemcpyDeviceToHost), "copy out");
}

double adam_step_cuda_resident_seconds(HalfFormat format, size_t count, int repeats) {
  if (!cuda_device_available()) throw std::runtime_error("CUDA: no device");
  if (count == 0 || repeats < 1) throw std::invalid_argument("adam_step_cuda_resident_seconds: count and repeats must be positive");
  DeviceState d(count);
  // 0x3c00 is 1.0 in fp16 and a small normal number in bf16: the arithmetic runs on finite values.
  check(cudaMemset(d.master, 0, d.float_bytes()), "cudaMemset");
  check(cudaMemset(d.m, 0, d.float_bytes()), "cudaMemset");
  check(cudaMemset(d.v, 0, d.float_bytes()), "cudaMemset");
  check(cudaMemset(d.grads, 0x3c, d.half_bytes()), "cudaMemset");
  AdamHyperparameters h;
  EventPair events;
  d.launch(AdamStepScalars::for_step(h, 1), format);
  std::vector<float> ms;
  for (int r = 0; r < repeats; ++r) {
    check(cudaEventRecord(events.start), "cudaEventRecord");
    d.launch(AdamStepScalars::for_step(h, r + 2), format);
    check(cudaEventRecord(events.stop), "cudaEventRecord");
    check(cudaEventSynchronize(events.stop), "cudaEventSynchronize");
    float elapsed = 0;
    check(cudaEventElapsedTime(&elapsed, events.start, events.stop), "cudaEventElapsedTime");
    ms.push_back(elapsed);
  }
  std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
  return ms[ms.size() / 2] * 1e-3;
}

}  // namespace luwu::validation
