// LuWu streaming sub-modules (param_fetch: sub-module) instead of layers: what the optimizer node
// multicasts, counted from the trace by hand, and the GPU buffer that lets Custom-1.0T fit an
// A100-40GB, which two layers in flight do not.
#include <doctest/doctest.h>

#include <string>

#include "sim/experiment/simulate.hpp"
#include "sim/systems/param_fetch_plan.hpp"
#include "tests/sim/sim_test_support.hpp"
#include "workloads/model_catalog.hpp"

using namespace luwu;
using namespace sim_test;

namespace {

double node_sent_bytes(const sim::SystemResult& r) {
  for (const auto& l : r.links)
    if (l.link == "optnode-nic0--switch_UP") return l.bytes;
  FAIL("no optnode-nic0--switch_UP link in the result");
  return 0;
}

}  // namespace

TEST_CASE("luwu sub-module streaming: the node multicasts each gather of the stage-3 plan once, per layer each pass") {
  const auto trace = gpt3_125m_trace();
  const Json settings = {{"param_fetch", "sub-module"}};
  // The plan (tested on its own in param_fetch_plan_test.cpp), with LuWu's workers keeping no
  // persistent parameters.
  sim::ParamFetchSettings fetch;
  fetch.param_persistence_threshold = 0;
  const auto plan = sim::plan_param_fetches(trace, fetch);
  double plan_bytes = 0;
  for (const auto& g : plan.gathers) plan_bytes += 2.0 * static_cast<double>(g.params);
  REQUIRE(plan_bytes > 0);
  auto topo = star(2);
  auto hw = quiet_hardware(topo);
  auto r = sim::simulate_system(trace, topo, hw, *make_system("luwu", settings), {});
  REQUIRE(r.feasible);
  CHECK(node_sent_bytes(r) == doctest::Approx(plan_bytes).epsilon(1e-9));
  // Per layer the node sends a layer's parameters for its forward and for its recompute, whose
  // backward reuses them; an op without a recompute before its backward gets them again.
  auto layers = sim::simulate_system(trace, topo, hw, *make_system("luwu"), {});
  double layer_bytes = 0;
  for (std::size_t i = 0; i < trace.ops.size(); ++i) {
    const auto& op = trace.ops[i];
    const bool after_recompute = op.kind == workloads::OpKind::Backward && i > 0 &&
                                 trace.ops[i - 1].kind == workloads::OpKind::Recompute && trace.ops[i - 1].layer == op.layer;
    if (!after_recompute) layer_bytes += static_cast<double>(op.param_bytes);
  }
  CHECK(node_sent_bytes(layers) == doctest::Approx(layer_bytes).epsilon(1e-9));
}

TEST_CASE("luwu: Custom-1.0T fits an A100-40GB streaming sub-modules, or one layer, where two layers in flight do not") {
  workloads::TrainingConfig t;
  t.micro_batch = 1;
  t.seq_len = 1024;
  t.recompute = true;
  t.dtype = workloads::DType::Bf16;
  const auto trace = workloads::generate_trace(*workloads::find_catalog_model("custom-1.0t"), t);
  // One block: 12 h^2 parameters (h = 22016), 2 B each, parameters and gradients: two blocks in
  // flight are 4 x 12 h^2 x 2 B = 46.5 GB, over the 40 GB alone.
  const double h = 22016;
  CHECK(4 * 12 * h * h * 2 == doctest::Approx(46.5e9).epsilon(1e-2));
  const double gpu = 40e9;
  const auto two_layers = make_system("luwu", {{"prefetch_layers", 1}})->memory_footprint(trace, 8, 1e12);
  const auto layer = make_system("luwu")->memory_footprint(trace, 8, gpu);
  const auto sub = make_system("luwu", {{"param_fetch", "sub-module"}})->memory_footprint(trace, 8, gpu);
  CHECK(two_layers.gpu_buffer_bytes == doctest::Approx(4 * 12 * h * h * 2).epsilon(1e-3));
  CHECK(static_cast<double>(two_layers.gpu_total_bytes()) > gpu);
  // Per layer, the node then streams none ahead: the layer in use, 23.3 GB, fits (the paper's
  // design: one layer must fit a GPU).
  CHECK(layer.fits);
  CHECK(layer.gpu_buffer_bytes == doctest::Approx(2 * 12 * h * h * 2).epsilon(1e-3));
  CHECK(sub.fits);
  // Sub-modules: the largest block's gradient (written whole before its push) plus at most
  // max_live_parameters (1e9) and the sub-module being fetched beyond it: under 24e9 + 2e9 + the
  // largest sub-module (FFN, 4 h^2 x 2 B = 3.9 GB).
  CHECK(sub.gpu_buffer_bytes < 12 * h * h * 2 + 2e9 + 4 * h * h * 2);
}

TEST_CASE("luwu param_fetch: settings of the other policy are errors at their paths") {
  auto fails_at = [](Json settings, const std::string& path, const std::string& words) {
    try {
      make_system("luwu", settings);
      FAIL("expected an error");
    } catch (const std::exception& e) {
      const std::string what = e.what();
      CHECK_MESSAGE(what.find(path) != std::string::npos, what);
      CHECK_MESSAGE(what.find(words) != std::string::npos, what);
    }
  };
  fails_at({{"max_live_parameters", 1e8}}, "$.systems[0].max_live_parameters", "sub-module");
  fails_at({{"param_fetch", "sub-module"}, {"prefetch_layers", 2}}, "$.systems[0].prefetch_layers", "layer");
  fails_at({{"param_fetch", "sub-module"}, {"param_persistence_threshold", 10}}, "$.systems[0].param_persistence_threshold",
           "no persistent parameters");
  CHECK_NOTHROW(make_system("luwu", {{"param_fetch", "layer"}, {"prefetch_layers", 2}}));
}
