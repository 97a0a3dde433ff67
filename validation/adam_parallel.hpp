#pragma once
// The multithreaded in-memory optimizer step: the slice split into one contiguous piece per pool
// thread.  Elements are independent, so the result is the same bits for any thread count.
#include "validation/adam_step.hpp"
#include "validation/thread_pool.hpp"

namespace luwu::validation {

// Piece boundaries fall on multiples of this many elements (4 KiB of fp32 state), so threads never
// share a cache line.
inline constexpr std::size_t kAdamPieceGranularity = 1024;

inline void adam_step_parallel(ThreadPool& pool, KernelIsa isa, const AdamStepScalars& s, HalfFormat format,
                               const AdamSlice& slice) {
  pool.parallel_for(slice.count, kAdamPieceGranularity, [&](std::size_t begin, std::size_t end) {
    adam_step_slice(isa, s, format, slice.sub(begin, end));
  });
}

}  // namespace luwu::validation
