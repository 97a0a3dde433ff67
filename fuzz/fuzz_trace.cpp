// libFuzzer target: the trace loader (workloads::trace_from_json, with the inline model).
#include "fuzz/fuzz_loader.hpp"
#include "workloads/trace.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return luwu::fuzz::run_loader(data, size, "fuzz.trace.json",
                                [](const luwu::JsonNode& node) { luwu::workloads::trace_from_json(node); });
}
