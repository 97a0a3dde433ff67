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

void launch(const AdamStepScalars& s, HalfFormat format, float* master, float* m, float* v,
            const unsigned short* grads, unsigned short* out, size_t n) {
  if (format == HalfFormat::fp16)
    adam_kernel<true><<<grid_for(n), 256>>>(s, master, m, v, grads, out, n);
  else
    adam_kernel<false><<<grid_for(n), 256>>>(s, master, m, v, grads, out, n);
  check(cudaGetLastError(), "kernel launch");
}

}  // namespace

bool cuda_device_available() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}

void adam_step_cuda(const AdamStepScalars& s, HalfFormat format, const AdamSlice& x) {
  if (!cuda_device_available()) throw std::runtime_error("CUDA: no device");
  const size_t n = x.count, fbytes = n * sizeof(float), hbytes = n * sizeof(unsigned short);
  float *master = nullptr, *m = nullptr, *v = nullptr;
  unsigned short *grads = nullptr, *out = nullptr;
  check(cudaMalloc(&master, fbytes), "cudaMalloc");
  check(cudaMalloc(&m, fbytes), "cudaMalloc");
  check(cudaMalloc(&v, fbytes), "cudaMalloc");
  check(cudaMalloc(&grads, hbytes), "cudaMalloc");
  check(cudaMalloc(&out, hbytes), "cudaMalloc");
  check(cudaMemcpy(master, x.master, fbytes, cudaMemcpyHostToDevice), "copy in");
  check(cudaMemcpy(m, x.m, fbytes, cudaMemcpyHostToDevice), "copy in");
  check(cudaMemcpy(v, x.v, fbytes, cudaMemcpyHostToDevice), "copy in");
  check(cudaMemcpy(grads, x.gradients, hbytes, cudaMemcpyHostToDevice), "copy in");
  launch(s, format, master, m, v, grads, out, n);
  check(cudaMemcpy(x.master, master, fbytes, cudaMemcpyDeviceToHost), "copy out");
  check(cudaMemcpy(x.m, m, fbytes, cudaMemcpyDeviceToHost), "copy out");
  check(cudaMemcpy(x.v, v, fbytes, cudaMemcpyDeviceToHost), "copy out");
  check(cudaMemcpy(x.params_out, out, hbytes, cudaMemcpyDeviceToHost), "copy out");
  cudaFree(master);
  cudaFree(m);
  cudaFree(v);
  cudaFree(grads);
  cudaFree(out);
}

double adam_step_cuda_resident_seconds(HalfFormat format, size_t count, int repeats) {
  if (!cuda_device_available()) throw std::runtime_error("CUDA: no device");
  if (count == 0 || repeats < 1) throw std::invalid_argument("adam_step_cuda_resident_seconds: count and repeats must be positive");
  const size_t fbytes = count * sizeof(float), hbytes = count * sizeof(unsigned short);
  float *master = nullptr, *m = nullptr, *v = nullptr;
  unsigned short *grads = nullptr, *out = nullptr;
  check(cudaMalloc(&master, fbytes), "cudaMalloc");
  check(cudaMalloc(&m, fbytes), "cudaMalloc");
  check(cudaMalloc(&v, fbytes), "cudaMalloc");
  check(cudaMalloc(&grads, hbytes), "cudaMalloc");
  check(cudaMalloc(&out, hbytes), "cudaMalloc");
  // 0x3c00 is 1.0 in fp16 and a small normal number in bf16: the arithmetic runs on finite values.
  check(cudaMemset(master, 0, fbytes), "cudaMemset");
  check(cudaMemset(m, 0, fbytes), "cudaMemset");
  check(cudaMemset(v, 0, fbytes), "cudaMemset");
  check(cudaMemset(grads, 0x3c, hbytes), "cudaMemset");
  AdamHyperparameters h;
  cudaEvent_t start, stop;
  check(cudaEventCreate(&start), "cudaEventCreate");
  check(cudaEventCreate(&stop), "cudaEventCreate");
  launch(AdamStepScalars::for_step(h, 1), format, master, m, v, grads, out, count);
  std::vector<float> ms;
  for (int r = 0; r < repeats; ++r) {
    check(cudaEventRecord(start), "cudaEventRecord");
    launch(AdamStepScalars::for_step(h, r + 2), format, master, m, v, grads, out, count);
    check(cudaEventRecord(stop), "cudaEventRecord");
    check(cudaEventSynchronize(stop), "cudaEventSynchronize");
    float elapsed = 0;
    check(cudaEventElapsedTime(&elapsed, start, stop), "cudaEventElapsedTime");
    ms.push_back(elapsed);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  cudaFree(master);
  cudaFree(m);
  cudaFree(v);
  cudaFree(grads);
  cudaFree(out);
  std::nth_element(ms.begin(), ms.begin() + ms.size() / 2, ms.end());
  return ms[ms.size() / 2] * 1e-3;
}

}  // namespace luwu::validation
