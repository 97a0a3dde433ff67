#include "validation/out_of_core_adam.hpp"
#include "validation/scratch_file.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <stdexcept>
#include <system_error>
#include <unistd.h>

#include "validation/adam_parallel.hpp"
#include "validation/read_update_write.hpp"

namespace luwu::validation {

namespace {

constexpr std::size_t kSlots = OutOfCoreAdam::kRequestsInFlight;
constexpr std::size_t kBlockGranularityParams = 1024;  // 4 KiB of fp32 per region

// Parameters per block: the staging buffer split over the slots, in whole 4 KiB regions, no more
// than the parameters need.
std::size_t block_params_for(std::size_t param_count, std::size_t dram_buffer_bytes) {
  const std::size_t min_slot = 3 * sizeof(float) * kBlockGranularityParams;
  const std::size_t params_rounded_up =
      (param_count + kBlockGranularityParams - 1) / kBlockGranularityParams * kBlockGranularityParams;
  return std::min(dram_buffer_bytes / kSlots / min_slot * kBlockGranularityParams, params_rounded_up);
}

[[noreturn]] void throw_errno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

}  // namespace

OutOfCoreAdam::OutOfCoreAdam(std::string path, std::size_t param_count, std::size_t dram_buffer_bytes,
                             bool try_direct_io)
    : path_(std::move(path)), param_count_(param_count) {
  if (param_count == 0) throw std::invalid_argument("an out-of-core optimizer needs at least one parameter");
  const std::size_t min_slot = 3 * sizeof(float) * kBlockGranularityParams;
  if (dram_buffer_bytes < kSlots * min_slot)
    throw std::invalid_argument("the DRAM staging buffer must hold at least " + std::to_string(kSlots * min_slot) + " bytes");
  block_params_ = block_params_for(param_count, dram_buffer_bytes);
  block_count_ = (param_count + block_params_ - 1) / block_params_;
  for (std::size_t i = 0; i < kSlots; ++i) slots_.emplace_back(3 * block_params_);

  // Created exclusively: a file or link planted at the name is never truncated or written through.
  const ScratchFile scratch = create_scratch_file(path_, try_direct_io);
  fd_ = scratch.fd;
  direct_io_ = scratch.direct_io;
  if (::ftruncate(fd_, static_cast<off_t>(file_bytes())) != 0) {
    ::close(fd_);
    ::unlink(path_.c_str());
    throw_errno(path_ + ": cannot size the optimizer state file");
  }
  if (direct_io_) {
    // Some filesystems accept O_DIRECT at open and refuse the I/O; probe once and fall back.
    if (::pread(fd_, slots_[0].data(), kPageBytes, 0) < 0 && errno == EINVAL) {
      ::close(fd_);
      direct_io_ = false;
      fd_ = ::open(path_.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC);
      if (fd_ < 0) throw_errno(path_ + ": cannot reopen the optimizer state file");
    }
  }
}

std::size_t OutOfCoreAdam::request_bytes_for(std::size_t param_count, std::size_t dram_buffer_bytes) {
  return 3 * sizeof(float) * block_params_for(param_count, dram_buffer_bytes);
}

OutOfCoreAdam::~OutOfCoreAdam() {
  if (fd_ >= 0) ::close(fd_);
  ::unlink(path_.c_str());
}

std::size_t OutOfCoreAdam::params_in_block(std::size_t block) const {
  return std::min(block_params_, param_count_ - block * block_params_);
}

void OutOfCoreAdam::read_block(std::size_t block, float* slot) {
  auto* dst = reinterpret_cast<char*>(slot);
  const off_t base = static_cast<off_t>(block * slot_bytes());
  std::size_t done = 0;
  while (done < slot_bytes()) {
    const ssize_t n = ::pread(fd_, dst + done, slot_bytes() - done, base + static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw_errno(path_ + ": read failed");
    if (n == 0) throw std::runtime_error(path_ + ": unexpected end of the optimizer state file");
    done += static_cast<std::size_t>(n);
  }
}

void OutOfCoreAdam::write_block(std::size_t block, const float* slot) {
  const auto* src = reinterpret_cast<const char*>(slot);
  const off_t base = static_cast<off_t>(block * slot_bytes());
  std::size_t done = 0;
  while (done < slot_bytes()) {
    const ssize_t n = ::pwrite(fd_, src + done, slot_bytes() - done, base + static_cast<off_t>(done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw_errno(path_ + ": write failed");
    done += static_cast<std::size_t>(n);
  }
}

void OutOfCoreAdam::write_state(const float* master, const float* m, const float* v) {
  float* slot = slots_[0].data();
  for (std::size_t b = 0; b < block_count_; ++b) {
    const std::size_t first = b * block_params_, n = params_in_block(b);
    std::fill(slot, slot + 3 * block_params_, 0.0f);
    std::copy(master + first, master + first + n, slot);
    std::copy(m + first, m + first + n, slot + block_params_);
    std::copy(v + first, v + first + n, slot + 2 * block_params_);
    write_block(b, slot);
  }
}

void OutOfCoreAdam::read_state(float* master, float* m, float* v) {
  float* slot = slots_[0].data();
  for (std::size_t b = 0; b < block_count_; ++b) {
    const std::size_t first = b * block_params_, n = params_in_block(b);
    read_block(b, slot);
    std::copy(slot, slot + n, master + first);
    std::copy(slot + block_params_, slot + block_params_ + n, m + first);
    std::copy(slot + 2 * block_params_, slot + 2 * block_params_ + n, v + first);
  }
}

template <typename Update>
OutOfCoreStepTiming OutOfCoreAdam::pipeline(Update&& update) {
  const PipelineTiming t = run_read_update_write(
      block_count_, static_cast<int>(slots_.size()), [&](std::size_t b, int slot) { read_block(b, slots_[slot].data()); },
      [&](std::size_t b, int slot) { update(b, slots_[slot].data()); },
      [&](std::size_t b, int slot) { write_block(b, slots_[slot].data()); });
  OutOfCoreStepTiming timing;
  timing.total_s = t.total_s;
  timing.compute_s = t.update_s;
  timing.compute_wait_s = t.update_wait_s;
  return timing;
}

OutOfCoreStepTiming OutOfCoreAdam::step(ThreadPool& pool, KernelIsa isa, const AdamStepScalars& s, HalfFormat format,
                                        const std::uint16_t* gradients, std::uint16_t* params_out) {
  return pipeline([&](std::size_t b, float* state) {
    const std::size_t first = b * block_params_;
    const AdamSlice slice{state, state + block_params_, state + 2 * block_params_, gradients + first,
                          params_out + first, params_in_block(b)};
    adam_step_parallel(pool, isa, s, format, slice);
  });
}

double OutOfCoreAdam::stream_state_s() {
  return pipeline([](std::size_t, float*) {}).total_s;
}

}  // namespace luwu::validation
