#pragma once
// One rank's replay of a ParamFetchPlan (param_fetch_plan.hpp): an op's kernels run in order; when
// a kernel that uses a sub-module comes, the gathers due then are issued, and the compute stream
// waits until that sub-module's gather is done.
#include <cstddef>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "sim/systems/param_fetch_plan.hpp"
#include "sim/systems/schedule.hpp"

namespace luwu::sim {

class ParamFetchReplay {
 public:
  // What issuing a gather started: an optional fetch of the shard to the GPU (ZeRO-Infinity's
  // read from NVMe or DRAM), and the all-gather.
  struct Issued {
    CompletionPtr fetched;
    CompletionPtr gathered;
  };
  // `issue(g)` starts gather g of the plan and returns at once (the work goes on streams).
  // `what` names the wait in the timeline ("all-gather", LuWu's "parameters multicast").
  ParamFetchReplay(RankEnv& env, const ParamFetchPlan& plan, std::function<Issued(std::size_t gather)> issue,
                   std::string what = "all-gather")
      : env_(env), plan_(plan), issue_(std::move(issue)), what_(std::move(what)), issued_(plan.gathers.size()) {}

  // Runs op `i`'s kernels, waiting for their parameters (ops must come in order).
  void compute(std::size_t i) {
    const auto& op = env_.trace().ops[i];
    std::size_t from = 0;
    for (; next_use_ < plan_.uses.size() && plan_.uses[next_use_].op == i; ++next_use_) {
      const ParamUse& use = plan_.uses[next_use_];
      env_.compute(op, from, use.kernel);
      from = use.kernel;
      for (; next_gather_ < plan_.gathers.size() && plan_.gathers[next_gather_].issued_at == next_use_; ++next_gather_)
        issued_[next_gather_] = issue_(next_gather_);
      const Issued& needed = issued_.at(use.gather);
      if (needed.fetched && !needed.fetched->done())
        env_.gpu.wait(needed.fetched, WaitCause::Io, "parameter shard from host " + label(next_use_));
      if (!needed.gathered->done()) env_.gpu.wait(needed.gathered, WaitCause::Communication, what_ + " " + label(next_use_));
    }
    env_.compute(op, from, env_.trace().kernels_of(op).size());
  }

  std::string label(std::size_t use) const { return param_use_label(env_.trace(), plan_, use); }

 private:
  RankEnv& env_;
  const ParamFetchPlan& plan_;
  std::function<Issued(std::size_t)> issue_;
  std::string what_;
  std::vector<Issued> issued_;
  std::size_t next_use_ = 0, next_gather_ = 0;
};

}  // namespace luwu::sim
