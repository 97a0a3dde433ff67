#pragma once
// One rank's replay of a ParamFetchPlan (param_fetch_plan.hpp): an op's kernels run in order; when
// a kernel that uses a sub-module comes, the gathers due then are issued, and the compute stream
// waits until that sub-module's gather is done.  A use that is a module's hook only (no gather of
// its own) issues its prefetches and, with GatherWait::AllIssued, waits as any other.
//
// With GatherWait::AllIssued, as DeepSpeed's stage-3 coordinator does (0.9.3,
// partitioned_param_coordinator.py fetch_sub_module: fetch the sub-module's own parameters, wait
// for them, then current_stream().wait_stream(allgather_stream), and only then prefetch), the
// compute stream waits for every gather issued before the sub-module's prefetches, not only its
// own: a prefetch overlaps the compute up to the next sub-module, not up to the prefetched one's.
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
  enum class GatherWait { Own, AllIssued };
  // What issuing a gather started: an optional fetch of the shard to the GPU (ZeRO-Infinity's
  // read from NVMe or DRAM), and the all-gather.
  struct Issued {
    CompletionPtr fetched;
    CompletionPtr gathered;
  };
  // `issue(g)` starts gather g of the plan and returns at once (the work goes on streams).
  // `what` names the wait in the timeline ("all-gather", LuWu's "parameters multicast").
  ParamFetchReplay(RankEnv& env, const ParamFetchPlan& plan, std::function<Issued(std::size_t gather)> issue,
                   std::string what = "all-gather", GatherWait wait = GatherWait::Own)
      : env_(env),
        plan_(plan),
        issue_(std::move(issue)),
        what_(std::move(what)),
        wait_(wait),
        issued_(plan.gathers.size()) {}

  // Called at each use after its prefetches were issued (ZeRO-Infinity's reads of NVMe shards ahead).
  void after_prefetches(std::function<void(std::size_t use)> f) { after_prefetches_ = std::move(f); }
  // The host thread's time in each use's module hook (ParamFetchSettings::forward_hook_host_s,
  // backward_hook_host_s), spent before it issues the use's gathers and launches its kernel.  A
  // layer's wrapper (the "layer" policy) is not DeepSpeed's hooks and takes none.
  void hook_host_times(const ParamFetchSettings& settings) {
    if (settings.granularity == ParamFetchSettings::Granularity::Layer) return;
    forward_hook_s_ = settings.forward_hook_host_s;
    backward_hook_s_ = settings.backward_hook_host_s;
  }

  // Runs op `i`'s kernels, waiting for their parameters (ops must come in order).
  void compute(std::size_t i) {
    const auto& op = env_.trace().ops[i];
    std::size_t from = 0;
    for (; next_use_ < plan_.uses.size() && plan_.uses[next_use_].op == i; ++next_use_) {
      const ParamUse& use = plan_.uses[next_use_];
      env_.compute(op, from, use.kernel);
      from = use.kernel;
      env_.gpu.host_work(op.kind == workloads::OpKind::Backward ? backward_hook_s_ : forward_hook_s_, "stage-3 module hook");
      // Its own gather (the one issued here for this use, if any) first, then the prefetches: the
      // host issues both without waiting (the streams wait).
      for (; due(next_use_) && plan_.gathers[next_gather_].first_use == next_use_; ++next_gather_)
        issued_[next_gather_] = issue_(next_gather_);
      const std::size_t before_prefetches = next_gather_;
      for (; due(next_use_); ++next_gather_) issued_[next_gather_] = issue_(next_gather_);
      if (after_prefetches_) after_prefetches_(next_use_);
      if (!use.hook_only()) wait_for(use.gather);
      if (wait_ == GatherWait::AllIssued)
        for (; waited_ < before_prefetches; ++waited_)
          if (!issued_[waited_].gathered->done())
            env_.gpu.wait(issued_[waited_].gathered, WaitCause::Communication,
                          what_ + " issued earlier (the compute stream waits for the gather stream) " + label(next_use_));
    }
    env_.compute(op, from, env_.trace().kernels_of(op).size());
  }

  std::string label(std::size_t use) const { return param_use_label(env_.trace(), plan_, use); }

 private:
  bool due(std::size_t use) const { return next_gather_ < plan_.gathers.size() && plan_.gathers[next_gather_].issued_at == use; }
  void wait_for(std::size_t gather) {
    const Issued& needed = issued_.at(gather);
    if (needed.fetched && !needed.fetched->done())
      env_.gpu.wait(needed.fetched, WaitCause::Io, "parameter shard from host " + label(next_use_));
    if (!needed.gathered->done()) env_.gpu.wait(needed.gathered, WaitCause::Communication, what_ + " " + label(next_use_));
  }

  RankEnv& env_;
  const ParamFetchPlan& plan_;
  std::function<Issued(std::size_t)> issue_;
  std::function<void(std::size_t)> after_prefetches_;
  std::string what_;
  GatherWait wait_;
  std::vector<Issued> issued_;
  std::size_t next_use_ = 0, next_gather_ = 0;
  std::size_t waited_ = 0;  // with GatherWait::AllIssued: the gathers before this one are done
  double forward_hook_s_ = 0, backward_hook_s_ = 0;
};

}  // namespace luwu::sim
