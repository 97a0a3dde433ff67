// Programmable and conventional switches, SSD striping, memory tiers: closed forms.
#include <doctest/doctest.h>

#include <string>

#include "common/input_error.hpp"
#include "models/models.hpp"

using namespace luwu::models;

namespace {
SwitchSpec switchml_like() {
  SwitchSpec s;
  s.ports = 64;
  s.port_Bps = 12.5e9;
  s.aggregation_slots = 128;
  s.elements_per_packet = 64;
  s.element_bytes = 4;
  s.aggregation_packets_per_s = 4e9;
  s.pipeline_latency_s = 1e-6;
  s.sram_bytes = 22e6;
  s.multicast = true;
  return s;
}
}  // namespace

TEST_CASE("SwitchML payload is 64 int32 elements = 256 B") {
  CHECK(switchml_like().payload_bytes() == 256);
  CHECK(switchml_like().slot_pool_bytes() == 128 * 256);
}

TEST_CASE("aggregation throughput is window-bound at long RTT and line-bound at short RTT") {
  SwitchSpec s = switchml_like();
  const double line = 12.5e9;
  // Window: 128 slots x 256 B = 32768 B in flight per RTT.
  // RTT 10 us: 32768 / 10e-6 = 3.2768e9 B/s < 12.5e9 -> window-bound.
  CHECK(s.aggregation_throughput_Bps(10e-6, line) == doctest::Approx(3.2768e9));
  // RTT 1 us: 32768 / 1e-6 = 32.768e9 B/s > 12.5e9 -> line-bound.
  CHECK(s.aggregation_throughput_Bps(1e-6, line) == doctest::Approx(12.5e9));
  // The crossover RTT: slots * payload / line = 32768 / 12.5e9 = 2.62 us.
  const double crossover = 128 * 256 / line;
  CHECK(s.aggregation_throughput_Bps(crossover * 1.01, line) < line);
  CHECK(s.aggregation_throughput_Bps(crossover * 0.99, line) == doctest::Approx(line));
}

TEST_CASE("the pipeline's packet rate, shared by all workers, can bind too") {
  SwitchSpec s = switchml_like();
  s.aggregation_packets_per_s = 100e6;  // 100 Mpkt/s
  // 8 workers: 100e6 * 256 / 8 = 3.2e9 B/s each, below line (12.5e9) and window at 1 us (32.8e9).
  CHECK(s.aggregation_throughput_Bps(1e-6, 12.5e9, 8) == doctest::Approx(3.2e9));
  // 1 worker: 25.6e9, above the line rate -> line-bound again.
  CHECK(s.aggregation_throughput_Bps(1e-6, 12.5e9, 1) == doctest::Approx(12.5e9));
}

TEST_CASE("shipped Tofino profiles carry SwitchML's packet format and multicast") {
  for (const char* name : {"tofino", "tofino2"}) {
    CAPTURE(name);
    SwitchSpec s = switch_from_profile(find_profile(name));
    CHECK(s.payload_bytes() == 256);
    CHECK(s.multicast);
    CHECK(s.slot_pool_bytes() < s.sram_bytes);
  }
  // Tofino2: 6 Bpps (Hot Chips 2020); 32 x 400 Gb/s.
  SwitchSpec t2 = switch_from_profile(find_profile("tofino2"));
  CHECK(t2.aggregation_packets_per_s == doctest::Approx(6e9));
  CHECK(t2.ports * t2.port_Bps == doctest::Approx(32 * 400e9 / 8));
}

TEST_CASE("SSD striping multiplies bandwidth and capacity by the device count") {
  SsdArray four{SsdSpec{7.0e9, 3.8e9, 3.84e12, 90e-6}, 4};
  CHECK(four.read_Bps() == doctest::Approx(28e9));
  CHECK(four.write_Bps() == doctest::Approx(15.2e9));
  CHECK(four.capacity_bytes() == doctest::Approx(15.36e12));
  // 2.1 TB of optimizer state (175B x 12 B) read once over 4 PM1733: 90 us + 2.1e12 / 28e9 = 75.00009 s.
  CHECK(four.read_time_s(2.1e12) == doctest::Approx(75.0));
  CHECK(four.read_time_s(2.1e12) - 75.0 == doctest::Approx(90e-6).scale(0).epsilon(1e-6));  // the access latency shows

  SsdArray one{ssd_from_profile(find_profile("samsung-pm1733")), 1};
  SsdArray eight{one.device, 8};
  CHECK(eight.read_Bps() == doctest::Approx(8 * one.read_Bps()));
  CHECK(one.read_Bps() == doctest::Approx(7.0e9));
}

TEST_CASE("SSD reads and writes at once: max of each direction's limit and the shared one") {
  // 1.1 GB/s reads, 2.5 GB/s writes, 2.2 GB/s together; 1 GB each way.
  SsdArray slow_reads{SsdSpec{1.1e9, 2.5e9, 1e12, 0, 2.2e9}, 1};
  CHECK(slow_reads.streaming_s(1e9, 1e9) == doctest::Approx(1 / 1.1).scale(0));  // the reads bind
  SsdArray shared{SsdSpec{2e9, 2e9, 1e12, 50e-6, 2.5e9}, 2};                     // striped over two
  CHECK(shared.read_write_Bps() == doctest::Approx(5e9).scale(0));
  CHECK(shared.stream_time_s(1e9, 1e9) == doctest::Approx(50e-6 + 2 / 5.0).scale(0));  // the shared limit binds
  // Unset: the faster direction's rate, SimGrid's default for a disk.
  SsdArray unset{SsdSpec{7.0e9, 3.8e9, 3.84e12, 90e-6}, 1};
  CHECK(unset.read_write_Bps() == doctest::Approx(7.0e9).scale(0));
  CHECK(unset.streaming_s(3.8e9, 3.8e9) == doctest::Approx(7.6 / 7.0).scale(0));  // 7.6 GB at 7 GB/s together
  // From a profile: the field when given, else the default.
  CHECK(ssd_from_profile(find_profile("samsung-pm1733")).read_write_Bps == doctest::Approx(7.0e9).scale(0));
  luwu::Json with_field = luwu::Json::parse(R"({"name": "mixed-ssd", "kind": "ssd", "description": "test", "fields": {
      "read_bandwidth": {"value": 1.1, "unit": "GB/s", "source": "test"},
      "write_bandwidth": {"value": 2.5, "unit": "GB/s", "source": "test"},
      "read_write_bandwidth": {"value": 2.2, "unit": "GB/s", "source": "test"},
      "capacity": {"value": 1, "unit": "TB", "source": "test"},
      "latency": {"value": 50, "unit": "us", "source": "test"}}})");
  CHECK(ssd_from_profile(profile_from_json(luwu::JsonNode(with_field, "mixed-ssd.json"))).read_write_Bps ==
        doctest::Approx(2.2e9).scale(0));
}

TEST_CASE("SSD at 1:1 mixed read/write: each direction gets min(read, write, read_write / 2)") {
  // Read 7 GB/s, write 3.8 GB/s, 5 GB/s read + written: 2.5 GB/s each way; striped over 4: 10 GB/s.
  SsdSpec d{7.0e9, 3.8e9, 1e12, 90e-6, 5e9};
  CHECK(d.mixed_Bps_per_direction() == doctest::Approx(2.5e9).scale(0));
  CHECK((SsdArray{d, 4}.mixed_Bps_per_direction()) == doctest::Approx(10e9).scale(0));
  // Unset shared limit (SimGrid's default, max(read, write) = 7 GB/s): 3.5 GB/s, below the 3.8 write.
  CHECK((SsdSpec{7.0e9, 3.8e9, 1e12, 90e-6}.mixed_Bps_per_direction()) == doctest::Approx(3.5e9).scale(0));
  // A slow direction binds: 1 GB/s writes against 5 GB/s shared.
  CHECK((SsdSpec{7.0e9, 1e9, 1e12, 90e-6, 5e9}.mixed_Bps_per_direction()) == doctest::Approx(1e9).scale(0));
}

TEST_CASE("the paper's testbed SSDs: 26 GB/s per direction at 1:1 over 16 (Gen3 hosts) and over 12 (Gen4 node)") {
  // One drive on both sides.  The Gen3 hosts' path caps each direction at the 1.625 GB/s measured
  // there (below the Gen3 x4 slot's 3.5753 GB/s: 4 lanes x 8 GT/s x 128/130 / 8 = 3.938 GB/s raw, x
  // 256/282 for TLPs), so pure reads and writes move 1.625 GB/s too, and both together 2 x 1.625,
  // under the drive's own 4.33 GB/s read + written.
  SsdSpec gen3 = ssd_from_profile(find_profile("paper-testbed-ssd-gen3"));
  CHECK(gen3.interface_Bps == doctest::Approx(1.625e9).scale(0));
  CHECK(gen3.read_Bps == doctest::Approx(1.625e9).scale(0));
  CHECK(gen3.write_Bps == doctest::Approx(1.625e9).scale(0));
  CHECK(gen3.read_write_Bps == doctest::Approx(3.25e9).scale(0));
  CHECK(gen3.mixed_Bps_per_direction() == doctest::Approx(1.625e9).scale(0));
  CHECK((SsdArray{gen3, 16}.mixed_Bps_per_direction()) == doctest::Approx(26e9).scale(0));
  // Without the host's path the slot would cap the drive, as the profile's fields give it.
  Profile slot_only = find_profile("paper-testbed-ssd-gen3");
  slot_only.fields.erase("host_path_bandwidth");
  SsdSpec in_slot = ssd_from_profile(slot_only);
  CHECK(in_slot.read_Bps == doctest::Approx(3.5753409711e9).epsilon(1e-9));
  CHECK(in_slot.write_Bps == doctest::Approx(3.5753409711e9).epsilon(1e-9));
  CHECK(in_slot.mixed_Bps_per_direction() == doctest::Approx(2.1666666667e9).epsilon(1e-9));
  // Gen4 x4: 7.877 GB/s raw x 256/282 = 7.1507 GB/s: the 7.0 GB/s read stays, as does the 3.8 write.
  SsdSpec gen4 = ssd_from_profile(find_profile("paper-testbed-ssd-gen4"));
  CHECK(gen4.interface_Bps == doctest::Approx(7.1506819422e9).epsilon(1e-9));
  CHECK(gen4.read_Bps == doctest::Approx(7.0e9).scale(0));
  CHECK(gen4.write_Bps == doctest::Approx(3.8e9).scale(0));
  CHECK(gen4.mixed_Bps_per_direction() == doctest::Approx(2.1666666667e9).epsilon(1e-9));
  CHECK((SsdArray{gen4, 12}.mixed_Bps_per_direction()) == doctest::Approx(26e9).epsilon(1e-9));
  // Capacity: ZeRO-Infinity's (12 + 2) B x 175e9 / 8 = 306.25 GB per worker on 2 of them, LuWu's
  // 14 B x 175e9 = 2.45 TB on 12.
  CHECK((SsdArray{gen3, 2}.capacity_bytes()) >= 306.25e9);
  CHECK((SsdArray{gen4, 12}.capacity_bytes()) >= 2.45e12);
}

TEST_CASE("an SSD behind its interface: each direction at most the link, both together at most twice it") {
  SsdSpec s = behind_interface(SsdSpec{7.0e9, 3.8e9, 1e12, 90e-6, 9e9}, 4e9);
  CHECK(s.read_Bps == 4e9);
  CHECK(s.write_Bps == 3.8e9);
  CHECK(s.read_write_Bps == 8e9);
  // A shared limit below the link's stays.
  CHECK(behind_interface(SsdSpec{7.0e9, 3.8e9, 1e12, 90e-6, 5e9}, 4e9).read_write_Bps == 5e9);
  CHECK_THROWS_AS(behind_interface(SsdSpec{7.0e9, 3.8e9, 1e12, 90e-6}, 0), std::invalid_argument);
}

TEST_CASE("requests of q bytes at queue depth d: min(sequential, d q / (latency + q / sequential)) (Little's law)") {
  const double mib = 1048576;
  // 7 GB/s, 90 us: a 1 MiB request holds its slot 90 + 149.80 = 239.80 us.
  CHECK(queued_Bps(7e9, 90e-6, mib, 1) == doctest::Approx(4.3727731124e9).epsilon(1e-9));   // 1 MiB / 239.80 us
  CHECK(queued_Bps(7e9, 90e-6, mib, 8) == 7e9);                                            // 34.98 GB/s > 7
  CHECK(queued_Bps(7e9, 90e-6, 4096, 32) == doctest::Approx(1.4469480962e9).epsilon(1e-9));  // 128 KiB / 90.585 us
  // No latency: the sequential rate at any depth.
  CHECK(queued_Bps(7e9, 0, 4096, 1) == doctest::Approx(7e9).scale(0));
  CHECK_THROWS_AS(queued_Bps(7e9, 90e-6, mib, 0), std::invalid_argument);
  CHECK_THROWS_AS(queued_Bps(7e9, 90e-6, 0, 8), std::invalid_argument);
  // Per direction, from the device's own rates: 1 MiB writes at depth 1, 90 + 275.94 us -> 2.8655 GB/s.
  SsdSpec pm1733{7.0e9, 3.8e9, 3.84e12, 90e-6};
  CHECK(pm1733.write_Bps_at(mib, 1) == doctest::Approx(2.8654232491e9).epsilon(1e-9));
  // An array spreads the queue over its devices: 2 devices at depth 2 = each at depth 1.
  SsdArray two = SsdArray{pm1733, 2}.at_requests(mib, 2);
  CHECK(two.read_Bps() == doctest::Approx(2 * 4.3727731124e9).epsilon(1e-9));
  CHECK(two.read_write_Bps() == doctest::Approx(2 * 7e9).scale(0));  // the shared limit is the devices'
  // The Gen3 testbed SSD (1.625 GB/s behind its host's path) at DeepSpeed's 1 MiB x 8: 11.41 GB/s > 1.625, unbound.
  SsdSpec gen3 = ssd_from_profile(find_profile("paper-testbed-ssd-gen3"));
  CHECK(gen3.read_Bps_at(mib, 8) == gen3.read_Bps);
  CHECK(gen3.read_Bps_at(mib, 1) == doctest::Approx(1.4260955152e9).epsilon(1e-9));  // 1 MiB / (90 + 645.28 us)
}

TEST_CASE("an SSD profile's host path: each direction at most it, both at most twice it, the slot's when wider") {
  // The PM1733 (7.0 / 3.8 GB/s, no shared limit given: 7 GB/s) in a Gen3 x4 slot (3.5753 GB/s).
  auto ssd = [](double host_path_Bps) {
    Profile p = find_profile("samsung-pm1733");
    apply_override(p, "pcie_generation", 3, "test");
    apply_override(p, "pcie_lanes", 4, "test");
    if (host_path_Bps > 0) apply_override(p, "host_path_bandwidth", host_path_Bps, "test");
    return ssd_from_profile(p);
  };
  const SsdSpec narrow = ssd(2e9);
  CHECK(narrow.read_Bps == 2e9);
  CHECK(narrow.write_Bps == 2e9);
  CHECK(narrow.read_write_Bps == 4e9);
  CHECK(narrow.interface_Bps == 2e9);
  CHECK(narrow.mixed_Bps_per_direction() == 2e9);
  // Reading 10 GB then writing 10 GB: 5 s each; at once: 20 GB / 4 GB/s = 5 s, each direction at 2.
  CHECK((SsdArray{narrow, 1}.streaming_s(10e9, 0)) == doctest::Approx(5.0).scale(0));
  CHECK((SsdArray{narrow, 1}.streaming_s(0, 10e9)) == doctest::Approx(5.0).scale(0));
  CHECK((SsdArray{narrow, 1}.streaming_s(10e9, 10e9)) == doctest::Approx(5.0).scale(0));
  // A path wider than the slot changes nothing: the slot binds.
  const SsdSpec wide = ssd(5e9);
  const SsdSpec slot = ssd(0);
  CHECK(wide.read_Bps == slot.read_Bps);
  CHECK(wide.write_Bps == slot.write_Bps);
  CHECK(wide.read_write_Bps == slot.read_write_Bps);
  CHECK(wide.interface_Bps == doctest::Approx(3.5753409711e9).epsilon(1e-9));
}

TEST_CASE("an SSD profile's PCIe interface: both fields, a shipped generation, a power-of-two width") {
  // The PM1733's rates (7.0 / 3.8 GB/s) behind the slot the fields name; 0: a field left out.
  auto ssd = [](double generation, double lanes) {
    Profile p = find_profile("samsung-pm1733");
    if (generation > 0) apply_override(p, "pcie_generation", generation, "test");
    if (lanes > 0) apply_override(p, "pcie_lanes", lanes, "test");
    return ssd_from_profile(p);
  };
  CHECK(ssd(0, 0).interface_Bps == 0);
  CHECK(ssd(5, 4).read_Bps == 7e9);  // Gen5 x4: 14.3 GB/s per direction
  CHECK(ssd(3, 8).read_Bps == 7e9);  // Gen3 x8: 7.15 GB/s, just above the 7 GB/s
  CHECK(ssd(3, 2).write_Bps == doctest::Approx(3.5753409711e9 / 2).epsilon(1e-9));  // Gen3 x2 caps the 3.8 GB/s
  CHECK_THROWS_WITH_AS(ssd(3, 0), doctest::Contains("$.fields.pcie_generation"), luwu::InputError);
  CHECK_THROWS_WITH_AS(ssd(0, 4), doctest::Contains("$.fields.pcie_lanes"), luwu::InputError);
  CHECK_THROWS_WITH_AS(ssd(2, 4), doctest::Contains("pcie-gen2-x16"), luwu::InputError);
  CHECK_THROWS_WITH_AS(ssd(4, 3), doctest::Contains("$.fields.pcie_lanes"), luwu::InputError);
  CHECK_THROWS_WITH_AS(ssd(4, 64), doctest::Contains("32 lanes"), luwu::InputError);
  // A fractional count is refused where the profile is read (the schema says whole numbers).
  luwu::Json j = luwu::Json::parse(R"({"name": "s", "kind": "ssd", "description": "test", "fields": {
      "read_bandwidth": {"value": 7, "unit": "GB/s", "source": "test"},
      "write_bandwidth": {"value": 3.8, "unit": "GB/s", "source": "test"},
      "capacity": {"value": 1, "unit": "TB", "source": "test"},
      "latency": {"value": 90, "unit": "us", "source": "test"},
      "pcie_generation": {"value": 4, "unit": "count", "source": "test"},
      "pcie_lanes": {"value": 2.5, "unit": "count", "source": "test"}}})");
  CHECK_THROWS_WITH_AS(profile_from_json(luwu::JsonNode(j, "s.json")), doctest::Contains("$.fields.pcie_lanes.value"),
                       luwu::InputError);
}

TEST_CASE("memory tiers: achieved = theoretical x stream efficiency") {
  // DDR4-3200: 25.6 GB/s per channel x 16 channels = 409.6 GB/s; 75% -> 307.2 GB/s.
  MemorySpec ddr4 = memory_from_profile(find_profile("ddr4-3200-dual-socket"));
  CHECK(ddr4.theoretical_Bps == doctest::Approx(3200e6 * 8 * 16));
  CHECK(ddr4.achieved_Bps() == doctest::Approx(307.2e9));
  // The host profile's DRAM reads the dram_* fields to the same numbers.
  MemorySpec host = memory_from_profile(find_profile("dual-socket-server-2021"));
  CHECK(host.achieved_Bps() == doctest::Approx(307.2e9));
  CpuSpec cpu = cpu_from_profile(find_profile("dual-socket-server-2021"));
  CHECK(cpu.memory_Bps == doctest::Approx(307.2e9));
  CHECK(cpu.cores == 64);
  // CXL tier is slower than DRAM, as it should be.
  MemorySpec cxl = memory_from_profile(find_profile("cxl-samsung-cmm-d"));
  CHECK(cxl.achieved_Bps() < ddr4.achieved_Bps());
  CHECK(cxl.latency_s > ddr4.latency_s);
}

TEST_CASE("a conventional switch: the shipped Mellanox SN2700 has no aggregation, and the aggregation fields come all or none") {
  const Profile sn2700 = find_profile("mellanox-sn2700");
  const SwitchSpec s = switch_from_profile(sn2700);
  CHECK_FALSE(s.aggregates);
  CHECK_FALSE(sn2700.has("aggregation_slots"));
  CHECK(s.ports == 32);                                  // 32 QSFP28 ports
  CHECK(s.port_Bps == doctest::Approx(100e9 / 8));       // of 100 GbE
  CHECK(s.payload_bytes() == 0);
  CHECK(switch_from_profile(find_profile("tofino")).aggregates);

  // A switch with some aggregation fields but not all is refused, naming a missing one.
  luwu::Json j = luwu::Json::parse(R"({"name": "half", "kind": "switch", "description": "d", "fields": {
      "ports": {"value": 8, "unit": "count", "source": "s"},
      "port_rate": {"value": 100, "unit": "Gb/s", "source": "s"},
      "pipeline_latency": {"value": 1, "unit": "us", "source": "s"},
      "aggregation_slots": {"value": 512, "unit": "count", "source": "s"}}})");
  const Profile half = profile_from_json(luwu::JsonNode(j, "half.json"));
  try {
    switch_from_profile(half);
    FAIL("expected an InputError");
  } catch (const luwu::InputError& e) {
    const std::string what = e.what();
    CHECK(what.find("half.json") != std::string::npos);
    CHECK(what.find("fields.sram_capacity") != std::string::npos);
    CHECK(what.find("conventional switch none") != std::string::npos);
  }
  // Without ports, pipeline latency, it is not a switch.
  j["fields"].erase("pipeline_latency");
  CHECK_THROWS_AS(profile_from_json(luwu::JsonNode(j, "half.json")), luwu::InputError);
}
