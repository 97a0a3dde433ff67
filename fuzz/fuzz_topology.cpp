// libFuzzer target: the topology loader, as load_topology runs it (topology_from_json, then
// validate_topology).
#include "fuzz/fuzz_loader.hpp"
#include "topologies/json_format.hpp"
#include "topologies/validate.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return luwu::fuzz::run_loader(data, size, "fuzz.topology.json", [](const luwu::JsonNode& node) {
    auto topo = luwu::topologies::topology_from_json(node);
    luwu::topologies::validate_topology(topo, node.file());
  });
}
