#pragma once
// A blocking FIFO of buffer-slot numbers between the stages of the out-of-core pipeline.
// abort() wakes every waiter; pop then returns nothing, so a failing stage stops the others.
#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>

namespace luwu::validation {

class BlockQueue {
 public:
  void push(int slot) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      items_.push_back(slot);
    }
    cv_.notify_one();
  }
  std::optional<int> pop() {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [&] { return aborted_ || !items_.empty(); });
    if (aborted_) return std::nullopt;
    const int slot = items_.front();
    items_.pop_front();
    return slot;
  }
  void abort() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      aborted_ = true;
    }
    cv_.notify_all();
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<int> items_;
  bool aborted_ = false;
};

}  // namespace luwu::validation
