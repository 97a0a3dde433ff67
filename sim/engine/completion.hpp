#pragma once
// A completion is what a CUDA event is to a stream: set once when the work it stands for has
// finished, waited on by any number of actors.
#include <memory>

#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Semaphore.hpp>

namespace luwu::sim {

class Completion {
 public:
  // SimGrid's actors take turns and never preempt one another, so done_ needs no lock.  An actor
  // that must block takes a semaphore of no capacity, made by the first to block; set() releases
  // it once per waiter.  (A mutex and condition variable cost three simcalls on each side, each a
  // context switch to the engine and back; this costs one.)
  void set() {
    done_ = true;
    finished_at_s_ = simgrid::s4u::Engine::get_clock();
    for (; waiters_ > 0; --waiters_) blocked_->release();
  }
  void wait() {
    if (done_) return;
    if (!blocked_) blocked_ = simgrid::s4u::Semaphore::create(0);
    ++waiters_;
    blocked_->acquire();
  }
  bool done() const { return done_; }
  double finished_at_s() const { return finished_at_s_; }

 private:
  simgrid::s4u::SemaphorePtr blocked_;
  int waiters_ = 0;  // actors blocked in wait()
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
