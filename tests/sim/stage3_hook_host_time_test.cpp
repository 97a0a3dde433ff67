// The host time of DeepSpeed's stage-3 hooks (ParamFetchSettings::forward_hook_host_s,
// backward_hook_host_s): the defaults are the measurement they cite, the settings parse as
// durations where hooks exist, and a rank's hooks, run one after another on its host thread, bound
// its iteration: at least their sum, at most the run without them plus their sum.
#include <doctest/doctest.h>

#include <string>

#include "common/json_input.hpp"
#include "sim/experiment/simulate.hpp"
#include "sim/systems/param_fetch_plan.hpp"
#include "tests/sim/sim_test_support.hpp"

using namespace luwu;
using namespace sim_test;

TEST_CASE("stage-3 hooks: the default host times are bench/deepspeed_hook_cost.py's per-module measurement") {
  const Json doc = load_json_file(std::string(LUWUSIM_SOURCE_DIR) +
                                  "/validation/measured/deepspeed-hooks-2026-12-02/hook_cost.json");
  const auto& per_module = doc.at("per_module_s");
  const sim::ParamFetchSettings defaults;
  CHECK(defaults.forward_hook_host_s == doctest::Approx(per_module.at("forward").get<double>()).epsilon(0.01));
  CHECK(defaults.backward_hook_host_s == doctest::Approx(per_module.at("backward").get<double>()).epsilon(0.01));
  // And the per-module times are the per-layer slope over OPT's 11 modules.
  CHECK(doc.at("modules_per_layer").get<int>() == 11);
  CHECK(per_module.at("forward").get<double>() ==
        doctest::Approx(doc.at("per_layer_s").at("forward").get<double>() / 11).epsilon(1e-12));
}

TEST_CASE("stage-3 hooks: host times parse as durations, only where DeepSpeed's hooks run") {
  CHECK(system_settings_error("zero3", {{"forward_hook_host_time", "100us"}, {"backward_hook_host_time", 0}}).empty());
  CHECK(system_settings_error("zero-infinity", {{"forward_hook_host_time", 2e-4}}).empty());
  CHECK(system_settings_error("zero3", {{"forward_hook_host_time", "-1us"}}).find("$.systems[0].forward_hook_host_time") !=
        std::string::npos);
  CHECK(system_settings_error("zero3", {{"backward_hook_host_time", "3 GB"}}).find("$.systems[0].backward_hook_host_time") !=
        std::string::npos);
  CHECK(system_settings_error("zero3", {{"param_fetch", "layer"}, {"forward_hook_host_time", "1us"}})
            .find("applies only with \"param_fetch\": \"sub-module\"") != std::string::npos);
  CHECK(system_settings_error("luwu", {{"param_fetch", "sub-module"}, {"forward_hook_host_time", "1us"}})
            .find("no per-module hooks") != std::string::npos);
}

TEST_CASE("stage-3 hooks: the host runs them one after another, so they bound the iteration from both sides") {
  // Hooks of 0.2 s and 0.3 s, far longer than anything else a rank does: the iteration is at least
  // the sum of its hooks (the host thread runs them in order), and at most the run without them
  // plus that sum (each delays what follows by at most itself).
  auto topo = star(2);
  auto hw = sim::hardware_of(topo);
  hw.worker_host.eager_kernel_launch_s = 0;  // the hooks alone
  const auto trace = synthetic_trace(4, 20'000'000, 1e12);
  const double forward_s = 0.2, backward_s = 0.3;
  for (const std::string system : {"zero3", "zero-infinity"}) {
    CAPTURE(system);
    Json settings{{"forward_hook_host_time", 0}, {"backward_hook_host_time", 0}};
    if (system == "zero-infinity") settings["offload"] = "dram";  // the star's workers have no SSDs
    const auto without = sim::simulate_system(trace, topo, hw, *make_system(system, settings), {});
    settings["forward_hook_host_time"] = forward_s;
    settings["backward_hook_host_time"] = backward_s;
    const auto with = sim::simulate_system(trace, topo, hw, *make_system(system, settings), {});
    REQUIRE(without.feasible);
    REQUIRE(with.feasible);
    CHECK(without.breakdown.host_launch_s == 0);
    const auto plan = sim::plan_param_fetches(trace, sim::ParamFetchSettings{});
    double hooks_s = 0;
    for (const auto& use : plan.uses)
      hooks_s += trace.ops[use.op].kind == workloads::OpKind::Backward ? backward_s : forward_s;
    REQUIRE(hooks_s > 10 * without.iteration_time_s);
    CHECK(with.iteration_time_s >= hooks_s * (1 - 1e-12));
    CHECK(with.iteration_time_s <= (without.iteration_time_s + hooks_s) * (1 + 1e-12));
    // The GPU waits for the host no longer than the host works, and for most of it here.
    CHECK(with.breakdown.host_launch_s <= hooks_s * (1 + 1e-12));
    CHECK(with.breakdown.host_launch_s > 0.5 * hooks_s);
  }
}
