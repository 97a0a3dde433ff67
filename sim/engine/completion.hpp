#pragma once
// A completion is what a CUDA event is to a stream: set once when the work it stands for has
// finished, waited on by any number of actors.
#include <memory>
#include <mutex>

#include <simgrid/s4u/ConditionVariable.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Mutex.hpp>

namespace luwu::sim {

class Completion {
 public:
  void set() {
    if (!waiters_) {  // nobody is blocked on it: no simcall, nothing to wake
      mark_done();
      return;
    }
    // Locking yields to other actors: done_ is set only once the lock is held, so no one sees it
    // (and drops the completion) while this actor still needs the mutex.
    std::unique_lock lock(*waiters_->mutex);
    mark_done();
    waiters_->cv->notify_all();
  }
  void wait() {
    if (done_) return;
    // Only a completion someone blocks on gets a SimGrid mutex and condition variable: most are
    // set before anyone waits, or never waited on (LuWu makes one per worker and parameter op).
    if (!waiters_) waiters_ = std::make_unique<Waiters>();
    std::unique_lock lock(*waiters_->mutex);
    waiters_->cv->wait(lock, [this] { return done_; });
  }
  bool done() const { return done_; }
  double finished_at_s() const { return finished_at_s_; }

 private:
  void mark_done() {
    done_ = true;
    finished_at_s_ = simgrid::s4u::Engine::get_clock();
  }
  struct Waiters {
    simgrid::s4u::MutexPtr mutex = simgrid::s4u::Mutex::create();
    simgrid::s4u::ConditionVariablePtr cv = simgrid::s4u::ConditionVariable::create();
  };
  std::unique_ptr<Waiters> waiters_;
  bool done_ = false;
  double finished_at_s_ = 0;
};

using CompletionPtr = std::shared_ptr<Completion>;

inline CompletionPtr make_completion() { return std::make_shared<Completion>(); }

// An already-finished completion, for work that needs no waiting.
inline CompletionPtr completed() {
  auto c = make_completion();
  c->set();
  return c;
}

}  // namespace luwu::sim
