#include "validation/adam_timing.hpp"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <unistd.h>
#include <vector>

#include "validation/adam_parallel.hpp"
#include "validation/aligned_buffer.hpp"
#include "validation/bandwidth.hpp"
#include "validation/half_precision.hpp"
#include "validation/out_of_core_adam.hpp"

namespace luwu::validation {

namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

AdamHyperparameters timing_hyperparameters() {
  AdamHyperparameters h;
  h.weight_decay = 0.01;
  h.weight_decay_mode = WeightDecayMode::decoupled;
  return h;
}

// Gradients of ordinary magnitude (no denormals, no infinities), written by the threads that use them.
void fill_gradients(ThreadPool& pool, std::uint16_t* g, std::size_t n, HalfFormat format) {
  pool.parallel_for(n, kAdamPieceGranularity, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t i = lo; i < hi; ++i) {
      const float value = (static_cast<float>(i % 2003) - 1001.0f) * 1e-4f;
      g[i] = format == HalfFormat::fp16 ? fp32_to_fp16_bits(value) : fp32_to_bf16_bits(value);
    }
  });
}

}  // namespace

InMemoryRun time_adam_in_memory(ThreadPool& pool, KernelIsa isa, HalfFormat format, std::size_t params, int steps) {
  AlignedBuffer<float> master(params), m(params), v(params);
  AlignedBuffer<std::uint16_t> grads(params), out(params);
  pool.parallel_for(params, kAdamPieceGranularity, [&](std::size_t lo, std::size_t hi) {
    std::fill(master.data() + lo, master.data() + hi, 0.5f);
    std::fill(m.data() + lo, m.data() + hi, 0.0f);
    std::fill(v.data() + lo, v.data() + hi, 0.0f);
    std::fill(out.data() + lo, out.data() + hi, std::uint16_t{0});
  });
  fill_gradients(pool, grads.data(), params, format);
  const AdamSlice slice{master.data(), m.data(), v.data(), grads.data(), out.data(), params};
  const AdamHyperparameters h = timing_hyperparameters();
  // A pass of the ceiling stream over the state before every step: each timed step is paired
  // with the passes on both sides of it.
  InMemoryRun run;
  std::vector<double> ceilings{measure_read_modify_write_Bps_on(pool, master.data(), m.data(), v.data(), params, 1)};
  for (int step = 1; step <= steps + 1; ++step) {
    const auto t0 = Clock::now();
    adam_step_parallel(pool, isa, AdamStepScalars::for_step(h, step), format, slice);
    const double step_s = std::chrono::duration<double>(Clock::now() - t0).count();
    ceilings.push_back(measure_read_modify_write_Bps_on(pool, master.data(), m.data(), v.data(), params, 1));
    if (step == 1) continue;
    run.step_s.push_back(step_s);
    run.state_read_modify_write_Bps.push_back((ceilings[ceilings.size() - 2] + ceilings.back()) / 2);
  }
  run.seconds_per_step = median(run.step_s);
  return run;
}

double time_adam_in_memory_s(ThreadPool& pool, KernelIsa isa, HalfFormat format, std::size_t params, int steps) {
  return time_adam_in_memory(pool, isa, format, params, steps).seconds_per_step;
}

OutOfCoreRun time_adam_out_of_core(ThreadPool& pool, KernelIsa isa, HalfFormat format, const std::string& dir,
                                   std::size_t params, std::size_t dram_buffer_bytes, int steps, int files) {
  const std::string path =
      (std::filesystem::path(dir) / ("luwusim-optimizer-state-" + std::to_string(::getpid()) + ".bin")).string();
  AlignedBuffer<std::uint16_t> grads(params), out(params);
  fill_gradients(pool, grads.data(), params, format);
  const AdamHyperparameters h = timing_hyperparameters();
  std::vector<double> times, streams;
  OutOfCoreRun run;
  run.direct_io = true;
  for (int file = 0; file < std::max(1, files); ++file) {
    OutOfCoreAdam optimizer(path, params, dram_buffer_bytes);
    {
      std::vector<float> master(params, 0.5f), zeros(params, 0.0f);
      optimizer.write_state(master.data(), zeros.data(), zeros.data());
    }
    for (int step = 1; step <= steps + 1; ++step) {
      const OutOfCoreStepTiming t =
          optimizer.step(pool, isa, AdamStepScalars::for_step(h, step), format, grads.data(), out.data());
      if (step > 1) times.push_back(t.total_s);
      if (step == 1 || step == steps + 1) streams.push_back(optimizer.stream_state_s());
    }
    run.file_bytes = static_cast<double>(optimizer.file_bytes());
    run.staging_bytes = static_cast<double>(optimizer.staging_bytes());
    run.request_bytes = static_cast<double>(OutOfCoreAdam::request_bytes_for(params, dram_buffer_bytes));
    run.direct_io = run.direct_io && optimizer.direct_io();
  }
  run.seconds_per_step = median(times);
  run.state_stream_Bps = 2.0 * run.file_bytes / median(streams);
  return run;
}

}  // namespace luwu::validation
