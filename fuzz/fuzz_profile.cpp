// libFuzzer target: the hardware-profile loader (models::profile_from_json).
#include "fuzz/fuzz_loader.hpp"
#include "models/profile.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return luwu::fuzz::run_loader(data, size, "fuzz.profile.json",
                                [](const luwu::JsonNode& node) { luwu::models::profile_from_json(node); });
}
