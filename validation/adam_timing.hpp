#pragma once
// Timed runs of the real optimizer step, for calibration, validation and the benchmark: the
// median over `steps` steps after one warm-up step.  Step numbers advance as in training.
#include <cstddef>
#include <string>
#include <vector>

#include "validation/adam_step.hpp"
#include "validation/thread_pool.hpp"

namespace luwu::validation {

// Seconds per step of the in-memory kernel over `params` parameters (AdamW, PyTorch's defaults).
double time_adam_in_memory_s(ThreadPool& pool, KernelIsa isa, HalfFormat format, std::size_t params, int steps);

struct InMemoryRun {
  double seconds_per_step = 0;  // the median of step_s
  std::vector<double> step_s;   // each timed step
  // For each timed step, the read-modify-write stream (bandwidth.hpp) over the kernel's own fp32
  // state arrays, the mean of one pass just before and one just after it.
  std::vector<double> state_read_modify_write_Bps;
};
InMemoryRun time_adam_in_memory(ThreadPool& pool, KernelIsa isa, HalfFormat format, std::size_t params, int steps);

struct OutOfCoreRun {
  double seconds_per_step = 0;
  double file_bytes = 0;
  double staging_bytes = 0;
  double request_bytes = 0;  // each read and write of a block
  bool direct_io = false;
  // Bytes read plus written per second by the same pipeline with no update (OutOfCoreAdam::
  // stream_state_s), on the same files, before and after their timed steps: the median.
  double state_stream_Bps = 0;
};

// The out-of-core optimizer with its state file in `dir` and a `dram_buffer_bytes` staging buffer:
// `files` times on a fresh state file (a file's rate can depend on where it lands on the device),
// a warm-up step then `steps` timed ones; the median over all timed steps.
OutOfCoreRun time_adam_out_of_core(ThreadPool& pool, KernelIsa isa, HalfFormat format, const std::string& dir,
                                   std::size_t params, std::size_t dram_buffer_bytes, int steps, int files = 1);

}  // namespace luwu::validation
