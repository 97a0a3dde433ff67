#include "validation/thread_pool.hpp"

#include <stdexcept>

namespace luwu::validation {

ThreadPool::ThreadPool(unsigned threads) {
  if (threads < 1) throw std::invalid_argument("a thread pool needs at least one thread");
  for (unsigned i = 1; i < threads; ++i) workers_.emplace_back([this, i] { worker_main(i); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  start_cv_.notify_all();
  for (auto& w : workers_) w.join();
}

void ThreadPool::run_piece(unsigned index) {
  const std::size_t pieces = size();
  auto boundary = [&](std::size_t k) {
    if (k == pieces) return count_;
    // Even shares, rounded down to the granularity.
    const std::size_t units = (count_ + granularity_ - 1) / granularity_;
    return std::min(count_, units * k / pieces * granularity_);
  };
  const std::size_t begin = boundary(index), end = boundary(index + 1);
  try {
    if (begin < end) (*body_)(begin, end);
  } catch (...) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!error_) error_ = std::current_exception();
  }
}

void ThreadPool::worker_main(unsigned index) {
  std::uint64_t seen = 0;
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      start_cv_.wait(lock, [&] { return stopping_ || generation_ != seen; });
      if (stopping_) return;
      seen = generation_;
    }
    run_piece(index);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (--pending_ == 0) done_cv_.notify_one();
    }
  }
}

void ThreadPool::parallel_for(std::size_t count, std::size_t granularity,
                              const std::function<void(std::size_t, std::size_t)>& body) {
  if (granularity < 1) granularity = 1;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    body_ = &body;
    count_ = count;
    granularity_ = granularity;
    error_ = nullptr;
    pending_ = static_cast<unsigned>(workers_.size());
    ++generation_;
  }
  start_cv_.notify_all();
  run_piece(0);
  std::unique_lock<std::mutex> lock(mutex_);
  done_cv_.wait(lock, [&] { return pending_ == 0; });
  body_ = nullptr;
  if (error_) std::rethrow_exception(error_);
}

}  // namespace luwu::validation
