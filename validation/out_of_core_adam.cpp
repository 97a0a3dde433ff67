#include "validation/out_of_core_adam.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <exception>
#include <fcntl.h>
#include <mutex>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <unistd.h>

#include "validation/adam_parallel.hpp"
#include "validation/block_queue.hpp"

namespace luwu::validation {

namespace {

constexpr std::size_t kSlots = 4;  // one being read, one or two being updated, one being written
constexpr std::size_t kBlockGranularityParams = 1024;  // 4 KiB of fp32 per region

[[noreturn]] void throw_errno(const std::string& what) {
  throw std::system_error(errno, std::generic_category(), what);
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

OutOfCoreAdam::OutOfCoreAdam(std::string path, std::size_t param_count, std::size_t dram_buffer_bytes,
                             bool try_direct_io)
    : path_(std::move(path)), param_count_(param_count) {
  if (param_count == 0) throw std::invalid_argument("an out-of-core optimizer needs at least one parameter");
  const std::size_t min_slot = 3 * sizeof(float) * kBlockGranularityParams;
  if (dram_buffer_bytes < kSlots * min_slot)
    throw std::invalid_argument("the DRAM staging buffer must hold at least " + std::to_string(kSlots * min_slot) + " bytes");
  const std::size_t params_rounded_up =
      (param_count + kBlockGranularityParams - 1) / kBlockGranularityParams * kBlockGranularityParams;
  block_params_ = dram_buffer_bytes / kSlots / min_slot * kBlockGranularityParams;
  block_params_ = std::min(block_params_, params_rounded_up);
  block_count_ = (param_count + block_params_ - 1) / block_params_;
  for (std::size_t i = 0; i < kSlots; ++i) slots_.emplace_back(3 * block_params_);

  const int flags = O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC;
  if (try_direct_io) {
    fd_ = ::open(path_.c_str(), flags | O_DIRECT, 0600);
    if (fd_ >= 0) direct_io_ = true;
  }
  if (fd_ < 0) fd_ = ::open(path_.c_str(), flags, 0600);
  if (fd_ < 0) throw_errno(path_ + ": cannot create the optimizer state file");
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
      fd_ = ::open(path_.c_str(), O_RDWR | O_CLOEXEC);
      if (fd_ < 0) throw_errno(path_ + ": cannot reopen the optimizer state file");
    }
  }
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
  BlockQueue free_slots, loaded, updated;
  for (std::size_t i = 0; i < slots_.size(); ++i) free_slots.push(static_cast<int>(i));
  std::mutex error_mutex;
  std::exception_ptr error;
  auto fail = [&] {
    {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
    }
    free_slots.abort();
    loaded.abort();
    updated.abort();
  };

  const auto t0 = std::chrono::steady_clock::now();
  std::thread reader([&] {
    try {
      for (std::size_t b = 0; b < block_count_; ++b) {
        const auto slot = free_slots.pop();
        if (!slot) return;
        read_block(b, slots_[*slot].data());
        loaded.push(*slot);
      }
    } catch (...) {
      fail();
    }
  });
  std::thread writer([&] {
    try {
      for (std::size_t b = 0; b < block_count_; ++b) {
        const auto slot = updated.pop();
        if (!slot) return;
        write_block(b, slots_[*slot].data());
        free_slots.push(*slot);
      }
    } catch (...) {
      fail();
    }
  });

  OutOfCoreStepTiming timing;
  try {
    for (std::size_t b = 0; b < block_count_; ++b) {
      const auto wait_start = std::chrono::steady_clock::now();
      const auto slot = loaded.pop();
      timing.compute_wait_s += seconds_since(wait_start);
      if (!slot) break;
      const auto compute_start = std::chrono::steady_clock::now();
      update(b, slots_[*slot].data());
      timing.compute_s += seconds_since(compute_start);
      updated.push(*slot);
    }
  } catch (...) {
    fail();
  }
  reader.join();
  writer.join();
  timing.total_s = seconds_since(t0);
  if (error) std::rethrow_exception(error);
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
