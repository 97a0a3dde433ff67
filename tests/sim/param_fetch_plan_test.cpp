// The stage-3 parameter coordinator's plan (sim/systems/param_fetch_plan.hpp) against counts
// derived from the model's sub-modules, and ZeRO-3's traffic under it.
#include <doctest/doctest.h>

#include <cstdint>

#include "sim/experiment/simulate.hpp"
#include "sim/systems/param_fetch_plan.hpp"
#include "tests/sim/sim_test_support.hpp"
#include "workloads/model_catalog.hpp"

using namespace luwu;
using namespace sim_test;
using sim::ParamFetchSettings;
using workloads::Trace;

namespace {

Trace gpt3_trace(const char* model, int grad_accum) {
  workloads::TrainingConfig t;
  t.micro_batch = 1;
  t.seq_len = 256;
  t.grad_accum = grad_accum;
  t.recompute = true;
  return workloads::generate_trace(*workloads::find_catalog_model(model), t);
}

std::uint64_t gathered(const sim::ParamFetchPlan& plan) {
  std::uint64_t sum = 0;
  for (const auto& g : plan.gathers) sum += g.params;
  return sum;
}

// Parameters the ops use, from the trace's op records (not its kernels).
std::uint64_t params_used_by_ops(const Trace& t) {
  std::uint64_t sum = 0;
  for (const auto& op : t.ops) sum += op.param_bytes / 2;
  return sum;
}

// GPT-3's LayerNorms (2h each): two per block and the final one, all under 1e5 parameters.
std::uint64_t norm_params(const Trace& t) { return (2 * t.model.layers + 1) * 2 * static_cast<std::uint64_t>(t.model.hidden); }

// GPU 0's all-gathers and kernels on the timeline, in order.
std::pair<std::vector<TrackSpan>, std::vector<TrackSpan>> gathers_and_kernels(const luwu::Json& timeline) {
  std::vector<TrackSpan> gathers, kernels;
  for (const auto& c : track_spans(timeline, "gpu0", "collectives"))
    if (c.name.rfind("all-gather", 0) == 0) gathers.push_back(c);
  for (const auto& c : track_spans(timeline, "gpu0", "compute"))
    if (c.category == "compute") kernels.push_back(c);
  return {gathers, kernels};
}

}  // namespace

TEST_CASE("without prefetch or reuse, each sub-module use gathers its own parameters when it comes") {
  const Trace t = gpt3_trace("gpt3-125m", 2);
  ParamFetchSettings s;
  s.module_hooks = ParamFetchSettings::ModuleHooks::WithParameters;  // no use without a gather
  s.param_persistence_threshold = 0;
  s.max_reuse_distance = 0;
  SUBCASE("no prefetch bucket") { s.prefetch_bucket_size = 0; }
  SUBCASE("no live budget left") { s.max_live_parameters = 1; }
  const auto plan = sim::plan_param_fetches(t, s);
  REQUIRE(plan.gathers.size() == plan.uses.size());
  for (std::size_t u = 0; u < plan.uses.size(); ++u) {
    CHECK(plan.uses[u].gather == u);
    CHECK(plan.gathers[u].issued_at == u);
    const auto& op = t.ops[plan.uses[u].op];
    CHECK(plan.gathers[u].params == t.kernels_of(op)[plan.uses[u].kernel].params);
  }
  // Every op's parameters, once per op.
  CHECK(gathered(plan) == params_used_by_ops(t));
  CHECK(plan.persistent_params == 0);
}

TEST_CASE("with DeepSpeed's defaults, a model under max_reuse_distance gathers each sub-module once per micro-step") {
  // GPT-3 125M: forward to backward of a sub-module spans fewer than 1e9 parameters of uses, so
  // nothing is released before its last use, and the norms (1536 < 1e5) never move.
  const Trace t = gpt3_trace("gpt3-125m", 2);
  ParamFetchSettings s;
  s.module_hooks = ParamFetchSettings::ModuleHooks::WithParameters;  // nothing runs before the embedding
  const auto plan = sim::plan_param_fetches(t, s);
  CHECK(plan.persistent_params == norm_params(t));
  std::uint64_t per_step = 0;  // each layer's params_used, the tied matrix in the embedding and the head
  for (const auto& l : t.layers) per_step += l.params_used;
  per_step -= norm_params(t);
  CHECK(gathered(plan) == 2 * per_step);
  // At the start of backward all of them are live at once.
  CHECK(plan.peak_live_params == per_step);
  // The live budget is never reached, so the prefetcher keeps ahead: only each micro-step's first
  // sub-module (the embedding) is gathered when its use comes.
  int on_demand = 0;
  for (const auto& g : plan.gathers) on_demand += g.issued_at == g.first_use ? 1 : 0;
  CHECK(on_demand == 2);
}

TEST_CASE("GPT-3 175B with DeepSpeed's defaults: one sub-module prefetched ahead, backward gathers again") {
  // h = 12288: QKV 3h^2 + 3h, out h^2 + h, up 4h^2 + 4h, down 4h^2 + h, each over the 5e7 bucket,
  // so each prefetch takes one sub-module.  Between a block's recompute and its backward, QKV is
  // 2 (h^2 + h) + 2 (4h^2 + 4h) + 2 (4h^2 + h) > 1e9 parameters away, so it is released and
  // gathered again; FFN-down is used twice in a row and kept.
  const Trace t = gpt3_trace("gpt3-175b", 1);
  const auto plan = sim::plan_param_fetches(t, {});
  const std::uint64_t h = 12288, qkv = 3 * h * h + 3 * h, out = h * h + h, up = 4 * h * h + 4 * h,
                      down = 4 * h * h + h;
  // Per block: forward gathers 4 sub-modules; recompute 4; backward all but FFN-down again.
  std::uint64_t per_block_gathers = 0;
  for (const auto& g : plan.gathers) {
    const auto& op = t.ops[plan.uses[g.first_use].op];
    if (op.layer == 5) per_block_gathers += g.params;
  }
  // Up is 2 x down = 8h^2 + 2h from its recompute use: released, and gathered for backward.
  CHECK(per_block_gathers == 3 * (qkv + out + up) + 2 * down);
}

TEST_CASE("per layer, each op that needs parameters gathers them prefetch_layers ops ahead") {
  const Trace t = gpt3_trace("gpt3-125m", 1);
  ParamFetchSettings s;
  s.granularity = ParamFetchSettings::Granularity::Layer;
  s.prefetch_layers = 2;
  const auto plan = sim::plan_param_fetches(t, s);
  // Embedding, 12 blocks, head forward; head and embedding backward, and each block's recompute
  // (its backward reuses the recompute's gather).
  CHECK(plan.gathers.size() == 1 + 12 + 1 + 1 + 12 + 1);
  CHECK(plan.uses.size() == plan.gathers.size() + 12);
  CHECK(plan.gathers[0].issued_at == 0);
  CHECK(plan.gathers[2].issued_at == 0);
  CHECK(plan.gathers[3].issued_at == 1);
  CHECK(plan.persistent_params == 0);
}

TEST_CASE("ZeRO-3 with DeepSpeed's defaults on a small model sends (gathered + P) (N-1)/N bytes per worker") {
  // Each sub-module is all-gathered once (above), each gradient reduce-scattered once; a ring
  // moves (N-1)/N of a collective's bytes out of each worker.
  const int n = 4;
  auto topo = star(n);
  auto hw = quiet_hardware(topo);
  const Trace t = gpt3_trace("gpt3-125m", 1);
  auto r = sim::simulate_system(t, topo, hw, *make_system("zero3"), {});
  REQUIRE(r.feasible);
  std::uint64_t used = 0;
  for (const auto& l : t.layers) used += l.params_used;
  const double gathered_bytes = 2.0 * static_cast<double>(used - norm_params(t));
  const double gradient_bytes = 2.0 * static_cast<double>(t.total_params());
  CHECK(r.sent_bytes_per_worker ==
        doctest::Approx((gathered_bytes + gradient_bytes) * (n - 1) / n).epsilon(1e-9).scale(0));
}

TEST_CASE("DeepSpeed's coordinator: the compute stream waits for every gather issued before a unit's prefetches") {
  // DeepSpeed 0.9.3's fetch_sub_module fetches a sub-module's own parameters, waits for them, makes
  // the compute stream wait for the all-gather stream (current_stream().wait_stream), and only then
  // prefetches: a prefetched gather overlaps the compute up to the next unit, not up to its own.
  // ZeRO-3 with layer units prefetched 2 ahead, 4 layers: unit 0 (forward layer 0) fetches gather 0
  // and then prefetches gathers 1 and 2, unit k prefetches gather k + 2; so unit 0's kernel runs
  // beside gather 1, while unit k's (0 < k < 7) starts only once gather k + 1 is done, though it
  // needs only gather k.  Layers of 40M parameters with tiny kernels, so that each gather outlasts
  // a kernel and the difference shows.
  auto topo = star(2);
  sim::SimulationOptions options;
  options.record_timeline = true;
  auto r = sim::simulate_system(synthetic_trace(4, 40'000'000, 1e9), topo, sim::hardware_of(topo),
                                *make_system("zero3", {{"param_fetch", "layer"}, {"prefetch_layers", 2}}), options);
  REQUIRE(r.feasible);
  const auto [gathers, kernels] = gathers_and_kernels(r.timeline);
  REQUIRE(gathers.size() == 8);  // forward and backward, one gather per layer each
  REQUIRE(kernels.size() == 8);
  const double tick_s = 1e-6;  // the timeline's unit
  CHECK(kernels[0].start_s >= gathers[0].end_s - tick_s);
  CHECK(kernels[0].end_s < gathers[1].end_s);
  for (std::size_t k = 1; k + 1 < kernels.size(); ++k) {
    REQUIRE(gathers[k + 1].end_s - gathers[k].end_s > 10 * (kernels[k].end_s - kernels[k].start_s));
    CHECK(kernels[k].start_s >= gathers[k + 1].end_s - tick_s);
  }
  CHECK(kernels.back().start_s >= gathers.back().end_s - tick_s);
}

TEST_CASE("every module's hook is a use: those without a gather of their own, counted from the module tree") {
  // GPT-3 125M, recompute on, 2 micro-steps.  Per micro-step: the causal-LM, model and decoder
  // modules before the embedding (3); per block in forward, in recompute and in backward, the
  // block, the attention module, the activation and the two persistent norms (1536 < 1e5
  // parameters) (5 each); the head's persistent final norm in forward (1) and in backward, with the
  // causal-LM module before the cross entropy and the model and decoder before the norm (4).
  const Trace t = gpt3_trace("gpt3-125m", 2);
  const auto plan = sim::plan_param_fetches(t, {});
  std::size_t hooks = 0;
  for (const auto& u : plan.uses) hooks += u.hook_only() ? 1 : 0;
  const std::size_t per_step = 3 + 12 * 3 * 5 + 1 + 4;
  CHECK(hooks == 2 * per_step);
  // The first hook (the causal-LM module's) finds the embedding's parameters not yet gathered and
  // prefetches them, so none of the iteration's gathers is issued at its own use.
  CHECK(plan.uses[0].hook_only());
  CHECK(plan.gathers[0].issued_at == 0);
  CHECK(plan.gathers[0].first_use == 3);
  int on_demand = 0;
  for (const auto& g : plan.gathers) on_demand += g.issued_at == g.first_use ? 1 : 0;
  CHECK(on_demand == 0);
  // The same modules gathered as without those hooks (they change when, not what).
  ParamFetchSettings with_parameters;
  with_parameters.module_hooks = ParamFetchSettings::ModuleHooks::WithParameters;
  CHECK(gathered(plan) == gathered(sim::plan_param_fetches(t, with_parameters)));
}

TEST_CASE("DeepSpeed's coordinator: a module without parameters waits for the gathers issued before its hook") {
  // One block of two sub-modules A and B (40M parameters each, tiny GEMMs) with a module without
  // parameters between them (an activation), prefetching one sub-module ahead.  A's use gathers A
  // and prefetches B, and A's kernel runs beside B's gather.  With every module hooked, the
  // activation's hook makes the compute stream wait for the all-gather stream: its kernel starts
  // only once B's gather is done.  Hooked only where parameters are gathered, it runs beside it.
  using workloads::OpKind;
  Trace t = synthetic_trace(1, 80'000'000, 3e9);
  workloads::Kernel a = t.kernel_lists[0][0], act = a, b = a;
  a.name = "a";
  a.flops = b.flops = act.flops = 1e9;
  a.params = b.params = 40'000'000;
  act.name = "act";
  act.parameterless_modules = 1;
  b.name = "b";
  t.kernel_lists = {{a, act, b}};
  auto topo = star(2);
  sim::SimulationOptions options;
  options.record_timeline = true;
  for (const char* hooks : {"all", "with-parameters"}) {
    CAPTURE(hooks);
    auto r = sim::simulate_system(t, topo, sim::hardware_of(topo),
                                  *make_system("zero3", {{"module_hooks", hooks},
                                                         {"prefetch_bucket_size", 1},
                                                         {"max_reuse_distance", 0},
                                                         {"param_persistence_threshold", 0}}),
                                  options);
    REQUIRE(r.feasible);
    const auto [gathers, kernels] = gathers_and_kernels(r.timeline);
    REQUIRE(kernels.size() == 6);  // forward a, act, b; backward b, act, a
    REQUIRE(gathers.size() >= 2);
    const TrackSpan &gather_b = gathers[1], &kernel_act = kernels[1];
    REQUIRE(gather_b.end_s - gather_b.start_s > 10 * (kernels[0].end_s - kernels[0].start_s));
    const double tick_s = 1e-6;  // the timeline's unit
    if (std::string(hooks) == "all") {
      CHECK(kernel_act.start_s >= gather_b.end_s - tick_s);
    } else {
      CHECK(kernel_act.end_s < gather_b.end_s);
    }
  }
}

namespace {

// One layer: sub-module A (40M parameters), an activation module without parameters, sub-module B
// (40M), each op one kernel of each.
Trace two_sub_modules_around_an_activation() {
  Trace t = synthetic_trace(1, 80'000'000, 3e9);
  workloads::Kernel a = t.kernel_lists[0][0], act = a, b = a;
  a.name = "a";
  b.name = "b";
  act.name = "act";
  a.params = b.params = 40'000'000;
  act.parameterless_modules = 1;
  t.kernel_lists = {{a, act, b}};
  return t;
}

}  // namespace

TEST_CASE("parameters on NVMe: no all-gather is prefetched past a shard not yet read, and reads wait for buffers") {
  // DeepSpeed 0.9.3 with offload_param "nvme": a sub-module A, an activation (a module without
  // parameters), a sub-module B, prefetching one sub-module ahead.  At A's use A's shard is read on
  // demand; the prefetch stops at B (its shard is still on NVMe) and B's shard is read after it
  // (__prefetch_nvme_param_partitions) if a buffer is free.  With 5 buffers B is read at A's use
  // and prefetched at the activation's hook; with 1 (A holds it until released after its use) B is
  // read at the hook and gathered only at its own use.  Off NVMe, B is prefetched at A's use.
  const Trace t = two_sub_modules_around_an_activation();
  ParamFetchSettings s;
  s.prefetch_bucket_size = 1;
  s.max_reuse_distance = 0;
  s.param_persistence_threshold = 0;
  auto forward_gathers = [&](int buffers) {
    s.nvme_param_buffers = buffers;
    const auto plan = sim::plan_param_fetches(t, s);
    REQUIRE(plan.uses.size() >= 3);
    CHECK(plan.uses[1].hook_only());
    REQUIRE(plan.gathers.size() >= 2);
    CHECK(plan.gathers[0].issued_at == 0);
    CHECK(plan.gathers[1].first_use == 2);
    return std::make_pair(plan.gathers[0], plan.gathers[1]);
  };
  const auto [a0, b0] = forward_gathers(0);
  CHECK(b0.issued_at == 0);
  CHECK_FALSE(a0.read_on_demand);
  const auto [a5, b5] = forward_gathers(5);
  CHECK(a5.read_on_demand);
  CHECK(b5.issued_at == 1);
  CHECK(b5.read_at == 0);
  CHECK_FALSE(b5.read_on_demand);
  const auto [a1, b1] = forward_gathers(1);
  CHECK(a1.read_on_demand);
  CHECK(b1.issued_at == 2);
  CHECK(b1.read_at == 1);
  CHECK_FALSE(b1.read_on_demand);
}

TEST_CASE("parameters on NVMe: a sub-module kept for its reuse holds its buffer, so its neighbour's read needs another") {
  // Sub-modules A, an activation, B, in forward and again in backward.  With reuse allowed (a
  // max_reuse_distance above the 80M elements between A's uses) A is not released after its
  // forward use and keeps its swap buffer (DeepSpeed releases a buffer only when the parameter is
  // partitioned again, partition_parameters.py _partition_param).  With one buffer B's shard cannot
  // be read ahead and is read at B's own use, the second buffer held at once: DeepSpeed's swap_in
  // asserts there.  With two, B is read ahead at A's use; without reuse, A's buffer is free again
  // before B's read, and one buffer is all it takes.
  const Trace t = two_sub_modules_around_an_activation();
  ParamFetchSettings s;
  s.prefetch_bucket_size = 1;
  s.param_persistence_threshold = 0;
  auto peak = [&](int buffers, double reuse) {
    s.nvme_param_buffers = buffers;
    s.max_reuse_distance = reuse;
    return sim::plan_param_fetches(t, s).peak_nvme_buffers;
  };
  CHECK(peak(1, 1e12) == 2);
  CHECK(peak(2, 1e12) == 2);
  CHECK(peak(1, 0) == 1);
  CHECK(peak(5, 0) == 2);  // B read ahead at A's use, before A's release
  CHECK(peak(0, 1e12) == 0);  // not on NVMe: no buffers
  CHECK(sim::plan_param_fetches(t, s).largest_partitioned_params == 40'000'000);
  // Shards under the swapper's min_aio_bytes stay in host memory: sub-modules under
  // nvme_min_swapped_params take no buffer, read nothing and stop no prefetch (B is gathered at
  // A's use, as off NVMe).
  s.nvme_param_buffers = 1;
  s.max_reuse_distance = 1e12;
  s.nvme_min_swapped_params = 40'000'001;
  const auto host = sim::plan_param_fetches(t, s);
  CHECK(host.peak_nvme_buffers == 0);
  REQUIRE(host.gathers.size() >= 2);
  CHECK(host.gathers[1].issued_at == 0);
  for (const auto& g : host.gathers) CHECK(g.nvme_params == 0);
  s.nvme_min_swapped_params = 40'000'000;
  const auto swapped = sim::plan_param_fetches(t, s);
  CHECK(swapped.peak_nvme_buffers == 2);
  CHECK(swapped.gathers[0].nvme_params == 40'000'000);
}
