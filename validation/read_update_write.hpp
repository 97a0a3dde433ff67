#pragma once
// The out-of-core pipeline's shape, shared by the optimizer and the disk calibration: a reader
// thread loads blocks 0..n-1 in order into free slots, the calling thread updates each loaded
// block, a writer thread writes it back and frees its slot.  A failing stage aborts the others and
// the first exception is rethrown once all three have stopped.
#include <chrono>
#include <cstddef>
#include <exception>
#include <mutex>
#include <thread>

#include "validation/block_queue.hpp"

namespace luwu::validation {

struct PipelineTiming {
  double total_s = 0;
  double update_s = 0;       // the calling thread updating blocks
  double update_wait_s = 0;  // the calling thread waiting for the reader
};

// read(block, slot), update(block, slot), write(block, slot); slots are numbered 0..slot_count-1.
template <typename Read, typename Update, typename Write>
PipelineTiming run_read_update_write(std::size_t block_count, int slot_count, Read&& read, Update&& update,
                                     Write&& write) {
  using Clock = std::chrono::steady_clock;
  auto seconds_since = [](Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); };
  BlockQueue free_slots, loaded, updated;
  for (int i = 0; i < slot_count; ++i) free_slots.push(i);
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
  // Moves every block from `from` to `to` through `stage`, in order.
  auto stage_loop = [&](BlockQueue& from, BlockQueue& to, auto& stage) {
    try {
      for (std::size_t b = 0; b < block_count; ++b) {
        const auto slot = from.pop();
        if (!slot) return;
        stage(b, *slot);
        to.push(*slot);
      }
    } catch (...) {
      fail();
    }
  };

  PipelineTiming timing;
  const auto t0 = Clock::now();
  std::thread reader([&] { stage_loop(free_slots, loaded, read); });
  std::thread writer([&] { stage_loop(updated, free_slots, write); });
  auto timed_update = [&](std::size_t b, int slot) {
    const auto start = Clock::now();
    update(b, slot);
    timing.update_s += seconds_since(start);
  };
  try {
    for (std::size_t b = 0; b < block_count; ++b) {
      const auto wait_start = Clock::now();
      const auto slot = loaded.pop();
      timing.update_wait_s += seconds_since(wait_start);
      if (!slot) break;
      timed_update(b, *slot);
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

}  // namespace luwu::validation
