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
  Completion() : mutex_(simgrid::s4u::Mutex::create()), cv_(simgrid::s4u::ConditionVariable::create()) {}

  void set() {
    std::unique_lock lock(*mutex_);
    done_ = true;
    finished_at_s_ = simgrid::s4u::Engine::get_clock();
    cv_->notify_all();
  }
  void wait() {
    std::unique_lock lock(*mutex_);
    cv_->wait(lock, [this] { return done_; });
  }
  bool done() const { return done_; }
  double finished_at_s() const { return finished_at_s_; }

 private:
  simgrid::s4u::MutexPtr mutex_;
  simgrid::s4u::ConditionVariablePtr cv_;
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
