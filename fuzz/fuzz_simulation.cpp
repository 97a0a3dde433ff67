// libFuzzer target: whole scenarios, loaded and simulated.  The loaders' targets stop at the
// document; this one goes on to run every system of a scenario that loads, as `luwusim run` does,
// so that extreme but accepted values (latencies, rates, counts, settings) reach the models and
// the engine.  Whatever a scenario asks past the fuzzer's small budget is skipped, not simulated:
// up to 8 GPUs, 20,000 kernels and 3 systems per input (each input must stay well under the CI
// run's 20 s per-input limit under the sanitizers).  A simulation that fails
// (an exception other than an input error, a crashed child, a rank that never finishes) is a
// finding.
#include "fuzz/fuzz_loader.hpp"
#include "sim/experiment/run_scenario.hpp"
#include "sim/experiment/scenario.hpp"
#include "workloads/trace.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return luwu::fuzz::run_loader(data, size, "/nonexistent-fuzz-dir/fuzz.simulation.json", [](const luwu::JsonNode& node) {
    const auto scenario = luwu::sim::scenario_from_json(node);
    luwu::sim::check_simulation_budget(scenario);
    const auto gpus = scenario.topology.gpus().size();
    auto one = scenario.training;
    one.grad_accum = 1;
    const auto kernels = luwu::workloads::generate_trace(scenario.model, one).kernel_count() *
                         static_cast<std::size_t>(scenario.training.grad_accum) * gpus;
    if (gpus > 8 || kernels > 20'000 || scenario.systems.size() > 3) return;
    luwu::sim::run_scenario(scenario, {});
  });
}
