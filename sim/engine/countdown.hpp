#pragma once
// Counts arrivals and fires once `expected` have arrived (the CUDA-event analogue of a barrier):
// a piece that is complete when every worker's share of it has reached the switch, a layer whose
// pieces have all been delivered.
#include "sim/engine/completion.hpp"

namespace luwu::sim {

class Countdown {
 public:
  explicit Countdown(int expected) : left_(expected), done_(make_completion()) {
    if (left_ <= 0) done_->set();
  }
  void arrive() {
    if (--left_ == 0) done_->set();
  }
  const CompletionPtr& done() const { return done_; }

 private:
  int left_;
  CompletionPtr done_;
};

}  // namespace luwu::sim
