// The optimizer kernel's throughput beside this machine's memory ceiling (a read-modify-write
// stream measured the same way in the same run) and a plain compiler-vectorized fp32 Adam loop,
// on 1 and 2 threads; then the out-of-core optimizer beside min(disk-bound, kernel-bound).
// Reference on this class of machine: DeepSpeed CPU Adam, 1.6e9 params/s on 2 threads with fp32
// params (2.0e9 with fp16 params) (shared/reference/hardware.md).
//   adam_bench [--params N] [--steps S] [--dir DIR] [--ooc-params N] [--ooc-buffer BYTES]
// Table on stdout, then one JSON object per line; progress on stderr.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "validation/adam_parallel.hpp"
#include "validation/adam_timing.hpp"
#include "validation/aligned_buffer.hpp"
#include "validation/bandwidth.hpp"

using namespace luwu::validation;

namespace {

struct Row {
  std::string name;
  unsigned threads;
  double params_per_s;
  double bytes_per_param;  // counted bytes moved per parameter (0 for pure streams)
  double bytes_per_s;
};

// Plain fp32 Adam (fp32 params and grads; 28 B/param: read p, g, m, v, write p, m, v), left to
// the compiler's auto-vectorizer at -O3 for AVX2 (the file is built with -fno-math-errno: errno from sqrt would block it).
__attribute__((target("avx2,fma"), optimize("O3"))) void plain_adam(float* __restrict p, const float* __restrict g,
                                                                    float* __restrict m, float* __restrict v,
                                                                    std::size_t n, float b1, float b2, float step_size,
                                                                    float bc2, float eps, float decay) {
  for (std::size_t i = 0; i < n; ++i) {
    m[i] = b1 * m[i] + (1 - b1) * g[i];
    v[i] = b2 * v[i] + (1 - b2) * g[i] * g[i];
    p[i] = p[i] * decay - step_size * m[i] / (std::sqrt(v[i]) * bc2 + eps);
  }
}

double time_plain_adam(ThreadPool& pool, std::size_t n, int steps) {
  AlignedBuffer<float> p(n), g(n), m(n), v(n);
  pool.parallel_for(n, 1024, [&](std::size_t lo, std::size_t hi) {
    for (std::size_t i = lo; i < hi; ++i) p[i] = 0.5f, g[i] = (static_cast<float>(i % 2003) - 1001.0f) * 1e-4f, m[i] = 0, v[i] = 0;
  });
  std::vector<double> times;
  for (int s = 0; s <= steps; ++s) {
    const auto t0 = std::chrono::steady_clock::now();
    pool.parallel_for(n, 1024, [&](std::size_t lo, std::size_t hi) {
      plain_adam(p.data() + lo, g.data() + lo, m.data() + lo, v.data() + lo, hi - lo, 0.9f, 0.999f, 1e-3f, 1.0f, 1e-8f, 0.99999f);
    });
    if (s > 0) times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

std::size_t arg(int argc, char** argv, const char* name, std::size_t dflt) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return std::strtoull(argv[i + 1], nullptr, 10);
  return dflt;
}
std::string arg_string(int argc, char** argv, const char* name, const std::string& dflt) {
  for (int i = 1; i + 1 < argc; ++i)
    if (std::strcmp(argv[i], name) == 0) return argv[i + 1];
  return dflt;
}

}  // namespace

int main(int argc, char** argv) {
  const std::size_t params = arg(argc, argv, "--params", 64ull << 20);
  const int steps = static_cast<int>(arg(argc, argv, "--steps", 7));
  const std::string dir = arg_string(argc, argv, "--dir", std::filesystem::temp_directory_path().string());
  const std::size_t ooc_params = arg(argc, argv, "--ooc-params", 128ull << 20);
  const std::size_t ooc_buffer = arg(argc, argv, "--ooc-buffer", 192ull << 20);
  constexpr double kAdamBytesPerParam = 28;  // read grad 2 + master, m, v 12; write master, m, v 12 + param 2

  std::vector<Row> rows;
  double kernel_2t_params_per_s = 0;
  for (unsigned threads : {1u, 2u}) {
    ThreadPool pool(threads);
    std::fprintf(stderr, "bench: %u thread(s): memory streams\n", threads);
    const double rmw = measure_read_modify_write_Bps(pool, params * 3, 5);
    rows.push_back({"read-modify-write stream (ceiling)", threads, 0, 8, rmw});
    const double triad = measure_triad_Bps(pool, params, 5);
    rows.push_back({"STREAM triad (fp64, 24 B/element)", threads, 0, 24, triad});
    for (KernelIsa isa : {KernelIsa::avx512, KernelIsa::avx2}) {
      if (!isa_supported(isa)) continue;
      for (HalfFormat format : {HalfFormat::fp16, HalfFormat::bf16}) {
        std::fprintf(stderr, "bench: %u thread(s): %s %s kernel\n", threads, isa_name(isa).c_str(),
                     format == HalfFormat::fp16 ? "fp16" : "bf16");
        const double s = time_adam_in_memory_s(pool, isa, format, params, steps);
        const double pps = static_cast<double>(params) / s;
        if (threads == 2 && isa == best_isa() && format == HalfFormat::fp16) kernel_2t_params_per_s = pps;
        rows.push_back({"luwusim AdamW " + isa_name(isa) + (format == HalfFormat::fp16 ? " fp16" : " bf16"), threads, pps,
                        kAdamBytesPerParam, pps * kAdamBytesPerParam});
      }
    }
    std::fprintf(stderr, "bench: %u thread(s): plain loop\n", threads);
    const double plain = static_cast<double>(params) / time_plain_adam(pool, params, steps);
    rows.push_back({"plain auto-vectorized fp32 Adam", threads, plain, 28, plain * 28});
  }

  // Out of core: a state file much larger than the staging buffer.
  ThreadPool pool(2);
  std::fprintf(stderr, "bench: scratch file bandwidth in %s\n", dir.c_str());
  // Requests of the size the out-of-core optimizer issues (one staging slot: a quarter of the buffer).
  const FileBandwidth disk = measure_file_bandwidth(dir, 1ull << 30, ooc_buffer / 4, 5);
  std::fprintf(stderr, "bench: out-of-core optimizer, %zu params\n", ooc_params);
  const OutOfCoreRun ooc = time_adam_out_of_core(pool, best_isa(), HalfFormat::fp16, dir, ooc_params, ooc_buffer, 3, 3);
  const double state_bytes = 12.0 * static_cast<double>(ooc_params);
  // The disk-bound step: the state read and written back in place, one reader and one writer at
  // once, as the pipeline does (measured); also shown, the step if reads and writes took turns.
  const double disk_bound_s = 2 * state_bytes / disk.read_write_Bps;
  const double disk_serial_s = state_bytes / disk.read_Bps + state_bytes / disk.write_Bps;
  const double kernel_bound_s = static_cast<double>(ooc_params) / kernel_2t_params_per_s;
  const double bound_s = std::max(disk_bound_s, kernel_bound_s);
  // The same bound with the disk rate of the optimizer's own state files (the pipeline run with no
  // update between its steps): file-to-file spread of the device left out.
  const double own_files_disk_s = 2 * state_bytes / ooc.state_stream_Bps;
  const double own_bound_s = std::max(own_files_disk_s, kernel_bound_s);
  const double ooc_pps = static_cast<double>(ooc_params) / ooc.seconds_per_step;

  std::printf("%-40s %7s %14s %10s %12s\n", "measure", "threads", "params/s", "B/param", "GB/s");
  for (const Row& r : rows)
    std::printf("%-40s %7u %14s %10.0f %12.2f\n", r.name.c_str(), r.threads,
                r.params_per_s > 0 ? fmt::format("{:.3e}", r.params_per_s).c_str() : "-", r.bytes_per_param, r.bytes_per_s / 1e9);
  std::printf("\nout of core: %zu params, state file %.2f GB, staging buffer %.0f MB, O_DIRECT %s\n", ooc_params,
              ooc.file_bytes / 1e9, ooc.staging_bytes / 1e6, ooc.direct_io ? "yes" : "no (refused)");
  std::printf("  scratch file: read %.2f GB/s, write %.2f GB/s, in-place read -> write-back %.2f GB/s (O_DIRECT %s)\n",
              disk.read_Bps / 1e9, disk.write_Bps / 1e9, disk.read_write_Bps / 1e9, disk.direct_io ? "yes" : "no");
  std::printf("  step %.3f s = %.3e params/s; disk-bound %.3f s (reads and writes in turn: %.3f s), kernel-bound %.3f s; "
              "achieved %.1f%% of min(disk, kernel) throughput\n",
              ooc.seconds_per_step, ooc_pps, disk_bound_s, disk_serial_s, kernel_bound_s, 100.0 * bound_s / ooc.seconds_per_step);
  std::printf("  its own state files streamed in place (no update) at %.2f GB/s: disk-bound %.3f s; achieved %.1f%% "
              "of min(disk, kernel) measured on its own files\n",
              ooc.state_stream_Bps / 1e9, own_files_disk_s, 100.0 * own_bound_s / ooc.seconds_per_step);
  std::printf("\n");
  for (const Row& r : rows)
    std::printf("{\"measure\": \"%s\", \"threads\": %u, \"params_per_s\": %.6g, \"bytes_per_param\": %.0f, \"bytes_per_s\": %.6g}\n",
                r.name.c_str(), r.threads, r.params_per_s, r.bytes_per_param, r.bytes_per_s);
  std::printf("{\"measure\": \"out-of-core AdamW fp16\", \"threads\": 2, \"params\": %zu, \"file_bytes\": %.0f, "
              "\"staging_bytes\": %.0f, \"direct_io\": %s, \"step_s\": %.6g, \"params_per_s\": %.6g, \"disk_read_Bps\": %.6g, "
              "\"disk_write_Bps\": %.6g, \"disk_read_write_Bps\": %.6g, \"disk_bound_s\": %.6g, \"disk_serial_s\": %.6g, \"kernel_bound_s\": %.6g, \"fraction_of_bound\": %.4f, "
              "\"state_files_stream_Bps\": %.6g, \"fraction_of_own_files_bound\": %.4f}\n",
              ooc_params, ooc.file_bytes, ooc.staging_bytes, ooc.direct_io ? "true" : "false", ooc.seconds_per_step, ooc_pps,
              disk.read_Bps, disk.write_Bps, disk.read_write_Bps, disk_bound_s, disk_serial_s, kernel_bound_s, bound_s / ooc.seconds_per_step,
              ooc.state_stream_Bps, own_bound_s / ooc.seconds_per_step);
  return 0;
}
