#pragma once
// ZeRO-Infinity's optimizer on the SSD tier: the fp32 master parameters and moments live in a file
// larger than the DRAM staging buffer, and each step streams them through it block by block:
// a reader thread preads block b+1 while the pool updates block b and a writer thread pwrites
// block b-1 back.  Gradients come in and 16-bit parameters go out through memory, as they do
// between GPU and CPU.  The update is the in-memory kernel's, so the results are the same bits.
//
// File layout: block k holds parameters [kB, (k+1)B) as three regions of B fp32 values (master,
// m, v); B is a multiple of 1024 so every region is a whole number of 4 KiB pages (O_DIRECT).
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "validation/adam_step.hpp"
#include "validation/aligned_buffer.hpp"
#include "validation/thread_pool.hpp"

namespace luwu::validation {

// Where the time of one out-of-core step went.
struct OutOfCoreStepTiming {
  double total_s = 0;
  double compute_s = 0;       // the pool updating blocks
  double compute_wait_s = 0;  // the compute stage waiting for the reader
};

class OutOfCoreAdam {
 public:
  // Creates (truncating) the state file `path` for `param_count` parameters, using at most
  // `dram_buffer_bytes` of staging memory (at least four 12 KiB blocks).  With `try_direct_io`
  // the file is opened with O_DIRECT, falling back to buffered I/O where the filesystem refuses.
  OutOfCoreAdam(std::string path, std::size_t param_count, std::size_t dram_buffer_bytes, bool try_direct_io = true);
  ~OutOfCoreAdam();  // closes and removes the file
  OutOfCoreAdam(const OutOfCoreAdam&) = delete;
  OutOfCoreAdam& operator=(const OutOfCoreAdam&) = delete;

  // Initial state in, final state out (sequential, through the staging buffer).
  void write_state(const float* master, const float* m, const float* v);
  void read_state(float* master, float* m, float* v);

  // One optimizer step over all parameters: gradients[param_count] in, params_out[param_count] out.
  OutOfCoreStepTiming step(ThreadPool& pool, KernelIsa isa, const AdamStepScalars& s, HalfFormat format,
                           const std::uint16_t* gradients, std::uint16_t* params_out);

  // The same pipeline with no update: every block read and written back unchanged.  Its time is
  // the device's share of a step, measured on this very file (the state is left as it was).
  double stream_state_s();

  // The size of every read and write the step issues (one block's three regions): what
  // `luwusim calibrate` measures the disk with.  Same arguments as the constructor.
  static std::size_t request_bytes_for(std::size_t param_count, std::size_t dram_buffer_bytes);
  static constexpr int kRequestsInFlight = 4;  // staging slots: one read, one or two updated, one written

  std::size_t param_count() const { return param_count_; }
  std::size_t block_params() const { return block_params_; }
  std::size_t block_count() const { return block_count_; }
  std::size_t staging_bytes() const { return slots_.size() * slot_bytes(); }
  std::uint64_t file_bytes() const { return std::uint64_t{block_count_} * slot_bytes(); }
  bool direct_io() const { return direct_io_; }
  const std::string& path() const { return path_; }

 private:
  std::size_t slot_bytes() const { return 3 * block_params_ * sizeof(float); }
  std::size_t params_in_block(std::size_t block) const;
  void read_block(std::size_t block, float* slot);
  void write_block(std::size_t block, const float* slot);
  // Reader -> update(block, slot) -> writer over every block, kSlots blocks in flight.
  template <typename Update>
  OutOfCoreStepTiming pipeline(Update&& update);

  std::string path_;
  std::size_t param_count_, block_params_, block_count_;
  int fd_ = -1;
  bool direct_io_ = false;
  std::vector<AlignedBuffer<float>> slots_;
};

}  // namespace luwu::validation
