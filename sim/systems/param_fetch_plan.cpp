#include "sim/systems/param_fetch_plan.hpp"

#include <algorithm>
#include <map>
#include <string>

#include "sim/systems/memory_footprint.hpp"
#include "sim/systems/param_prefetch.hpp"
#include "sim/systems/schedule.hpp"

namespace luwu::sim {
namespace {

using workloads::OpKind;
using Granularity = ParamFetchSettings::Granularity;

// A use before planning: which sub-module, how big; a hook gathers none (module kHook).
constexpr std::size_t kHook = static_cast<std::size_t>(-1);
struct Step {
  std::size_t op, kernel, module;
  std::uint64_t params;
  int micro_step;
  bool hook() const { return module == kHook; }
};

// The sub-modules each op uses, in order.  Forward and recompute meet a layer's sub-modules in the
// kernels' order, backward in the reverse: the k-th of M in backward is the (M-1-k)-th.
class SubModules {
 public:
  explicit SubModules(const workloads::Trace& trace) : trace_(trace) {}

  std::vector<Step> steps() {
    std::vector<Step> steps;
    const auto e = static_cast<std::uint64_t>(workloads::bytes_per_element(trace_.training.dtype));
    for (std::size_t i = 0; i < trace_.ops.size(); ++i) {
      const auto& op = trace_.ops[i];
      if (op.param_bytes == 0) continue;
      const auto& kernels = trace_.kernels_of(op);
      std::uint64_t named = 0;
      std::size_t count = 0;
      for (const auto& k : kernels) {
        named += k.params;
        count += k.params > 0 ? 1 : 0;
      }
      if (named * e != op.param_bytes) {  // no (or inconsistent) sub-modules: the op is one
        steps.push_back({i, 0, id(op.layer, -1, op.param_bytes / e), op.param_bytes / e, op.micro_step});
        continue;
      }
      std::size_t k = 0;
      for (std::size_t j = 0; j < kernels.size(); ++j) {
        for (int h = 0; h < kernels[j].parameterless_modules; ++h) steps.push_back({i, j, kHook, 0, op.micro_step});
        if (kernels[j].params == 0) continue;
        const std::size_t ordinal = op.kind == OpKind::Backward ? count - 1 - k : k;
        steps.push_back({i, j, id(op.layer, static_cast<int>(ordinal), kernels[j].params), kernels[j].params,
                         op.micro_step});
        ++k;
      }
    }
    return steps;
  }
  std::size_t count() const { return params_.size(); }
  std::uint64_t params(std::size_t module) const { return params_[module]; }

 private:
  std::size_t id(int layer, int ordinal, std::uint64_t params) {
    auto [it, added] = ids_.try_emplace({layer, ordinal}, params_.size());
    if (added) params_.push_back(params);
    return it->second;
  }
  const workloads::Trace& trace_;
  std::map<std::pair<int, int>, std::size_t> ids_;
  std::vector<std::uint64_t> params_;
};

// DeepSpeed's coordinator over one micro-step's uses [begin, end).
void plan_micro_step(const std::vector<Step>& steps, std::size_t begin, std::size_t end, const SubModules& modules,
                     const ParamFetchSettings& s, ParamFetchPlan& plan) {
  constexpr long long kNever = -1;
  std::vector<bool> live(modules.count(), false);
  std::vector<long long> fetched_for(modules.count(), kNever);  // the latest use the queue has passed
  std::vector<std::size_t> source(modules.count(), 0);          // the gather that brought it
  // Distance to a module's next use, in elements of the uses between: prefix sums and next use.
  std::vector<double> before(end - begin + 1, 0);
  for (std::size_t u = begin; u < end; ++u) before[u - begin + 1] = before[u - begin] + static_cast<double>(steps[u].params);
  std::vector<std::size_t> next_use(end - begin, end);
  {
    std::vector<std::size_t> seen(modules.count(), end);
    for (std::size_t u = end; u-- > begin;) {
      if (steps[u].hook()) continue;
      next_use[u - begin] = seen[steps[u].module];
      seen[steps[u].module] = u;
    }
  }
  // NVMe (nvme_param_buffers > 0): which shards hold a pinned buffer, since which use, and the
  // gathers issued and not yet waited for by their own use (the coordinator's in-flight registry).
  // A sub-module under nvme_min_swapped_params stays in host memory: it needs no buffer.
  auto swapped = [&](std::size_t m) {
    return s.nvme_param_buffers > 0 && modules.params(m) >= s.nvme_min_swapped_params;
  };
  std::vector<bool> buffered(modules.count(), false);
  std::vector<std::size_t> read_at(modules.count(), 0);
  std::vector<bool> in_flight(modules.count(), false);
  double flying = 0;  // the elements of the sub-modules in flight
  int buffers_used = 0;
  auto gather = [&](std::size_t at, const std::vector<std::size_t>& which) {
    ParamGather g{at, at, 0};
    for (std::size_t m : which) {
      g.params += modules.params(m);
      live[m] = true;
      if (!in_flight[m]) flying += static_cast<double>(modules.params(m));
      in_flight[m] = true;
      source[m] = plan.gathers.size();
      if (!swapped(m)) continue;
      g.nvme_params += modules.params(m);
      if (!buffered[m]) {  // read now, synchronously (only a sub-module's own fetch gets here)
        buffered[m] = true;
        ++buffers_used;
        plan.peak_nvme_buffers = std::max(plan.peak_nvme_buffers, buffers_used);
        read_at[m] = at;
        g.read_on_demand = true;
      }
      g.read_at = std::max(g.read_at, read_at[m]);
    }
    if (g.read_on_demand) g.read_at = at;
    plan.gathers.push_back(g);
    return g.params;
  };
  auto release = [&](std::size_t m) {
    live[m] = false;
    if (buffered[m]) --buffers_used;
    buffered[m] = false;
  };

  double live_params = 0;
  std::size_t queue = begin;  // the next use the prefetcher has not passed
  auto skip_hooks = [&] {
    while (queue < end && steps[queue].hook()) ++queue;
  };
  for (std::size_t u = begin; u < end; ++u) {
    const bool hook = steps[u].hook();
    const std::size_t m = steps[u].module;
    if (!hook && !live[m]) live_params += static_cast<double>(gather(u, {m}));
    if (!hook && in_flight[m]) {  // its own use waits for it
      in_flight[m] = false;
      flying -= static_cast<double>(modules.params(m));
    }
    if (!hook && fetched_for[m] < static_cast<long long>(u)) {  // the queue's front is this use: pass it
      skip_hooks();
      fetched_for[steps[queue].module] = static_cast<long long>(queue);
      ++queue;
    }
    // Prefetch while budget is left: at least one module, until the bucket is full or the live
    // budget spent (the last module may overshoot it, as DeepSpeed's loop does).
    const double budget = std::min(s.max_live_parameters - live_params, s.prefetch_bucket_size);
    std::vector<std::size_t> batch;
    std::size_t first_use = 0;
    double batched = 0;
    while (s.prefetch_bucket_size > 0 && batched < budget) {
      skip_hooks();
      if (queue == end) break;
      const std::size_t next = steps[queue].module;
      if (swapped(next) && !live[next] && !buffered[next]) break;  // its shard is still on NVMe
      fetched_for[next] = std::max(fetched_for[next], static_cast<long long>(queue));
      if (!live[next] && std::find(batch.begin(), batch.end(), next) == batch.end()) {
        if (batch.empty()) first_use = queue;
        batch.push_back(next);
        batched += static_cast<double>(modules.params(next));
      }
      ++queue;
    }
    if (!batch.empty()) {
      live_params += static_cast<double>(gather(u, batch));
      plan.gathers.back().first_use = first_use;
    }
    // Read shards ahead from the queue's front, up to twice the elements in flight, while buffers
    // last (a buffer is taken when the read is issued).
    if (s.nvme_param_buffers > 0 && s.prefetch_bucket_size > 0) {
      double considered = 0;
      int reads = 0;
      for (std::size_t q = queue; q < end; ++q) {
        if (steps[q].hook()) continue;
        if (considered > 2 * flying || reads >= s.nvme_param_buffers - buffers_used) break;
        const std::size_t p = steps[q].module;
        if (swapped(p) && !live[p] && !buffered[p]) {
          buffered[p] = true;
          read_at[p] = u;
          ++reads;
        }
        considered += static_cast<double>(modules.params(p));
      }
      buffers_used += reads;
      plan.peak_nvme_buffers = std::max(plan.peak_nvme_buffers, buffers_used);
    }
    plan.uses.push_back({steps[u].op, steps[u].kernel, hook ? ParamUse::kNoGather : source[m]});
    plan.peak_live_params = std::max(plan.peak_live_params, static_cast<std::uint64_t>(live_params));
    if (hook) continue;
    // Release after the sub-module, unless the prefetcher passed a use of it beyond the next one,
    // or its next use comes within max_reuse_distance elements of uses.
    const std::size_t next = next_use[u - begin];
    const bool reused_soon =
        next < end && before[next - begin] - before[u + 1 - begin] < s.max_reuse_distance;
    if (fetched_for[m] <= static_cast<long long>(u + 1) && !reused_soon) {
      release(m);
      live_params -= static_cast<double>(modules.params(m));
    }
  }
}

// One unit per op that needs parameters, fetched `depth` such ops ahead (param_prefetch.hpp): the
// k-th unit's gather is issued when unit max(0, k - depth) comes.  A block's backward that
// follows its recompute waits on the recompute's gather.
ParamFetchPlan plan_layers(const workloads::Trace& trace, int depth) {
  ParamFetchPlan plan;
  const auto e = static_cast<std::uint64_t>(workloads::bytes_per_element(trace.training.dtype));
  const auto needs = ops_needing_params(trace);
  std::vector<std::size_t> unit_uses;  // the use at which each unit comes
  for (std::size_t i = 0; i < trace.ops.size(); ++i) {
    if (trace.ops[i].param_bytes == 0) continue;
    if (needs[i]) {
      unit_uses.push_back(plan.uses.size());
      plan.gathers.push_back({0, plan.uses.size(), trace.ops[i].param_bytes / e});
    }
    plan.uses.push_back({i, 0, plan.gathers.size() - 1});
  }
  const auto ahead = static_cast<std::size_t>(depth);
  for (std::size_t k = 0; k < plan.gathers.size(); ++k) plan.gathers[k].issued_at = unit_uses[k > ahead ? k - ahead : 0];
  return plan;
}

}  // namespace

std::vector<std::string> ParamFetchSettings::sub_module_keys() {
  return {"max_live_parameters", "prefetch_bucket_size",   "max_reuse_distance",     "param_persistence_threshold",
          "module_hooks",        "forward_hook_host_time", "backward_hook_host_time"};
}

std::vector<std::string> ParamFetchSettings::keys() {
  std::vector<std::string> all = sub_module_keys();
  all.insert(all.begin(), "param_fetch");
  all.push_back("prefetch_layers");
  return all;
}

ParamFetchSettings ParamFetchSettings::parse(const SystemEntry& entry) {
  static const Choices<Granularity> names = {{"sub-module", Granularity::SubModule}, {"layer", Granularity::Layer}};
  ParamFetchSettings s;
  if (entry.has("param_fetch")) s.granularity = entry.at("param_fetch").as_choice(names, "parameter fetch policy");
  const bool layer = s.granularity == Granularity::Layer;
  auto only_with = [&](const char* key, bool allowed, const char* policy) {
    if (entry.has(key) && !allowed)
      entry.at(key).fail(std::string("\"") + key + "\" applies only with \"param_fetch\": \"" + policy + "\"");
  };
  for (const auto& key : sub_module_keys()) only_with(key.c_str(), !layer, "sub-module");
  static const Choices<ModuleHooks> hooks = {{"all", ModuleHooks::All}, {"with-parameters", ModuleHooks::WithParameters}};
  if (entry.has("module_hooks")) s.module_hooks = entry.at("module_hooks").as_choice(hooks, "module hooks");
  only_with("prefetch_layers", layer, "layer");
  // Bounds: counts of parameters a model can have (luwusim's traces hold up to 1e15).
  auto count = [&](const char* key, double dflt, bool positive) {
    if (!entry.has(key)) return dflt;
    const double v = positive ? entry.at(key).as_positive() : entry.at(key).as_non_negative();
    if (v > 1e15) entry.at(key).fail("expected at most 1e15 parameters");
    return v;
  };
  s.max_live_parameters = count("max_live_parameters", s.max_live_parameters, true);
  s.prefetch_bucket_size = count("prefetch_bucket_size", s.prefetch_bucket_size, false);
  s.max_reuse_distance = count("max_reuse_distance", s.max_reuse_distance, false);
  s.param_persistence_threshold = count("param_persistence_threshold", s.param_persistence_threshold, false);
  s.prefetch_layers = static_cast<int>(entry.settings().get_int("prefetch_layers", 1, 0, 1000));
  if (entry.has("forward_hook_host_time")) s.forward_hook_host_s = duration_s(entry.at("forward_hook_host_time"), 1, true);
  if (entry.has("backward_hook_host_time")) s.backward_hook_host_s = duration_s(entry.at("backward_hook_host_time"), 1, true);
  return s;
}

ParamFetchPlan plan_param_fetches(const workloads::Trace& trace, const ParamFetchSettings& settings) {
  SubModules modules(trace);
  std::vector<Step> steps = modules.steps();
  std::uint64_t largest = 0;
  for (const Step& st : steps)
    if (static_cast<double>(st.params) >= settings.param_persistence_threshold) largest = std::max(largest, st.params);
  if (settings.granularity == Granularity::Layer) {
    ParamFetchPlan layers = plan_layers(trace, settings.prefetch_layers);
    layers.largest_partitioned_params = largest;
    // Whole layers on NVMe (not DeepSpeed's way): each read when its gather is issued, no buffer budget.
    if (settings.nvme_param_buffers > 0)
      for (ParamGather& g : layers.gathers) {
        g.nvme_params = g.params;
        g.read_at = g.issued_at;
        g.read_on_demand = true;
      }
    return layers;
  }
  ParamFetchPlan plan;
  plan.largest_partitioned_params = largest;
  // Persistent sub-modules never move: their uses gather nothing, a hook's or none.
  const bool all_hooks = settings.module_hooks == ParamFetchSettings::ModuleHooks::All;
  std::vector<bool> counted(modules.count(), false);
  for (Step& st : steps) {
    if (st.hook() || static_cast<double>(st.params) >= settings.param_persistence_threshold) continue;
    if (!counted[st.module]) plan.persistent_params += st.params;
    counted[st.module] = true;
    st.module = kHook;
    st.params = 0;
  }
  if (!all_hooks) std::erase_if(steps, [](const Step& st) { return st.hook(); });
  for (std::size_t begin = 0; begin < steps.size();) {
    std::size_t end = begin;
    while (end < steps.size() && steps[end].micro_step == steps[begin].micro_step) ++end;
    plan_micro_step(steps, begin, end, modules, settings, plan);
    begin = end;
  }
  return plan;
}

std::uint64_t gathered_working_set_bytes(const workloads::Trace& trace, const ParamFetchSettings& settings) {
  if (settings.granularity == Granularity::Layer) return layer_working_set_bytes(trace, settings.prefetch_layers);
  const auto plan = plan_param_fetches(trace, settings);
  std::uint64_t largest_layer = 0;
  for (const auto& l : trace.layers) largest_layer = std::max(largest_layer, l.params);
  const auto e = static_cast<std::uint64_t>(workloads::bytes_per_element(trace.training.dtype));
  return (plan.peak_live_params + plan.persistent_params + largest_layer) * e;
}

std::string param_use_label(const workloads::Trace& trace, const ParamFetchPlan& plan, std::size_t use) {
  const ParamUse& u = plan.uses.at(use);
  const auto& op = trace.ops.at(u.op);
  return trace.kernels_of(op).at(u.kernel).name + " " + op_label(trace, op);
}

}  // namespace luwu::sim
