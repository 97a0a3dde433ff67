#pragma once
// A small persistent pool of std::threads for data-parallel loops.  parallel_for splits a range
// statically into one contiguous piece per thread (the caller works on the first), so a
// streaming loop reads memory in long sequential runs; results never depend on the thread count
// as long as the body treats elements independently.
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace luwu::validation {

class ThreadPool {
 public:
  explicit ThreadPool(unsigned threads);  // threads >= 1, counting the calling thread
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  unsigned size() const { return static_cast<unsigned>(workers_.size()) + 1; }

  // Calls body(begin, end) on disjoint pieces covering [0, count); piece boundaries are
  // multiples of `granularity`.  Returns when all pieces are done; rethrows a body's exception.
  void parallel_for(std::size_t count, std::size_t granularity,
                    const std::function<void(std::size_t, std::size_t)>& body);

 private:
  void worker_main(unsigned index);
  void run_piece(unsigned index);

  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable start_cv_, done_cv_;
  const std::function<void(std::size_t, std::size_t)>* body_ = nullptr;
  std::size_t count_ = 0, granularity_ = 1;
  std::uint64_t generation_ = 0;
  unsigned pending_ = 0;
  bool stopping_ = false;
  std::exception_ptr error_;
};

}  // namespace luwu::validation
