// Programmable switch aggregation, SSD striping, memory tiers: closed forms.
#include <doctest/doctest.h>

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
