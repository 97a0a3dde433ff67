// SmartNIC kinds (models/smartnic.hpp): an FPGA NIC's push and pull each at line rate; an SoC
// NIC's two Arm-path limits, against the datasheet arithmetic.
#include <doctest/doctest.h>

#include "models/models.hpp"

using namespace luwu;
using namespace luwu::models;

namespace {
Profile rejected_profile(const Json& j) {
  return profile_from_json(JsonNode(j, "nic.json"));
}

// The JSON path of the error loading the profile and building its spec; "" if accepted.
std::string error_path(const Json& j) {
  try {
    smartnic_from_profile(rejected_profile(j));
  } catch (const InputError& e) {
    CHECK(e.file() == "nic.json");
    return e.json_path();
  }
  return "";
}
}  // namespace

TEST_CASE("BlueField-2 at 200 Gb/s: push and pull at once are bound by Arm memory, near the paper's 20%") {
  const SmartNicSpec bf2 = smartnic_from_profile(find_profile("bluefield2-200g"));
  CHECK(bf2.kind == SmartNicKind::Soc);
  const double line_Bps = 200e9 / 8;
  // Datasheet arithmetic: the Arm link is 250 Gb/s per direction and carries push and pull, so
  // r <= 125 Gb/s; Arm DRAM is one DDR4-3200 channel, 25.6 GB/s = 204.8 Gb/s, crossed twice by
  // each of the two streams, so r <= 204.8 / 4 = 51.2 Gb/s at full theoretical bandwidth and
  // 51.2 x 0.75 = 38.4 Gb/s at the profile's STREAM-like efficiency.
  const double arm_link_r = 250e9 / 8 / 2;
  const double arm_memory_r = 25.6e9 * 0.75 / 4;
  CHECK(arm_link_r == doctest::Approx(125e9 / 8));
  CHECK(arm_memory_r * 8 == doctest::Approx(38.4e9));
  CHECK(bf2.push_pull_each_Bps(4096) == doctest::Approx(arm_memory_r));
  CHECK(bf2.push_pull_each_Bps(256) == doctest::Approx(arm_memory_r));
  // 19.2% of the link rate; the paper measured 20%.
  CHECK(bf2.push_pull_each_Bps(4096) / line_Bps == doctest::Approx(0.192));
  CHECK(bf2.push_pull_each_Bps(4096) / line_Bps == doctest::Approx(0.20).epsilon(0.05));

  // At full theoretical memory bandwidth: 51.2 Gb/s = 25.6% of the link rate.
  Profile ideal = find_profile("bluefield2-200g");
  apply_override(ideal, "arm_memory_stream_efficiency", 1.0);
  CHECK(smartnic_from_profile(ideal).push_pull_each_Bps(4096) / line_Bps == doctest::Approx(0.256));
  // With ample Arm memory the Arm link binds: 125 Gb/s each.
  apply_override(ideal, "arm_memory_bandwidth", 1e12);
  CHECK(smartnic_from_profile(ideal).push_pull_each_Bps(4096) == doctest::Approx(arm_link_r));

  // One stream alone crosses Arm DRAM twice: 204.8 x 0.75 / 2 = 76.8 Gb/s.
  CHECK(bf2.one_direction_Bps(4096) * 8 == doctest::Approx(76.8e9));
}

TEST_CASE("BlueField-3 at 400 Gb/s: 716.8 Gb/s of Arm memory gives 134.4 Gb/s each way") {
  const SmartNicSpec bf3 = smartnic_from_profile(find_profile("bluefield3-400g"));
  CHECK(bf3.kind == SmartNicKind::Soc);
  // 716.8 x 0.75 / 4 = 134.4 Gb/s; the (assumed) 400 Gb/s Arm link allows 200.
  CHECK(bf3.push_pull_each_Bps(4096) * 8 == doctest::Approx(134.4e9));
}

TEST_CASE("an FPGA SmartNIC (Alveo U50) pushes and pulls at line goodput at once") {
  const SmartNicSpec u50 = smartnic_from_profile(find_profile("alveo-u50"));
  CHECK(u50.kind == SmartNicKind::Fpga);
  CHECK(u50.memory_bytes == doctest::Approx(8e9));
  const double goodput = 100e9 / 8 * 4096 / (4096 + 82);
  CHECK(u50.push_pull_each_Bps(4096) == doctest::Approx(goodput));
  CHECK(u50.one_direction_Bps(4096) == doctest::Approx(goodput));
  // SwitchML-sized packets (256 B): 12.5e9 * 256 / 338, below 148.8 Mpkt/s x 256 B = 38.1 GB/s.
  CHECK(u50.push_pull_each_Bps(256) == doctest::Approx(12.5e9 * 256 / 338));
}

TEST_CASE("a SmartNIC without smartnic_kind is on-path, a soc one needs its Arm fields") {
  Json j = profile_to_json(find_profile("bluefield2-100g"));
  CHECK(j["fields"]["smartnic_kind"]["value"] == "soc");
  CHECK(j["fields"]["smartnic_kind"]["unit"] == "choice");
  CHECK(smartnic_from_profile(rejected_profile(j)).kind == SmartNicKind::Soc);  // round-trips

  Json legacy = j;
  for (const char* f : {"smartnic_kind", "arm_link_bandwidth", "arm_memory_bandwidth", "arm_memory_stream_efficiency"})
    legacy["fields"].erase(f);
  const SmartNicSpec old = smartnic_from_profile(rejected_profile(legacy));
  CHECK(old.kind == SmartNicKind::Fpga);
  CHECK(old.push_pull_each_Bps(4096) == doctest::Approx(old.throughput_Bps(4096)));

  Json missing = j;
  missing["fields"].erase("arm_memory_bandwidth");
  CHECK(error_path(missing) == "$.fields.arm_memory_bandwidth");
  Json bad = j;
  bad["fields"]["smartnic_kind"]["value"] = "asic";
  CHECK(error_path(bad) == "$.fields.smartnic_kind.value");
  Json unit = j;
  unit["fields"]["smartnic_kind"]["unit"] = "count";
  CHECK(error_path(unit) == "$.fields.smartnic_kind.unit");
}
