// libFuzzer target: the scenario loader (sim::scenario_from_json: inline or catalog model,
// training, cluster built by a topology builder or read from a topology_file, systems).  The
// document's file name sits in a folder with no files, so a relative topology_file finds nothing;
// absolute paths are still read, as the CLI would.
#include "fuzz/fuzz_loader.hpp"
#include "sim/experiment/scenario.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return luwu::fuzz::run_loader(data, size, "/nonexistent-fuzz-dir/fuzz.scenario.json",
                                [](const luwu::JsonNode& node) { luwu::sim::scenario_from_json(node); });
}
