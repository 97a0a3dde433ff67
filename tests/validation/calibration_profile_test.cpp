// The calibrated profiles load with the models' strict profile reader, with the measured values in
// base units, and the predictions follow the models' formulas.
#include <doctest/doctest.h>

#include "models/profile.hpp"
#include "validation/adam_step.hpp"
#include "validation/calibration.hpp"
#include "validation/step_time_validation.hpp"

using namespace luwu;
using namespace luwu::validation;

namespace {
Calibration example() {
  Calibration c;
  c.hostname = "testhost";
  c.date = "2026-01-02";
  c.threads = 2;
  c.dram_capacity_bytes = 24e9;
  c.triad_Bps = 14e9;
  c.read_modify_write_Bps = 20e9;
  c.peak_fp32_flops = 160e9;
  c.file.read_Bps = 1e9;
  c.file.write_Bps = 2e9;
  c.file.read_write_Bps = 1.5e9;
  c.file.read_latency_s = 50e-6;
  c.file.direct_io = true;
  c.file_capacity_bytes = 250e9;
  c.scratch_dir = "/scratch";
  return c;
}
}  // namespace

TEST_CASE("calibrated host and SSD profiles pass the models' validation with the measured values") {
  const Calibration c = example();
  const Json host_json = host_profile_json(c), ssd_json = ssd_profile_json(c);
  const models::Profile host = models::profile_from_json(JsonNode(host_json, "host.json"));
  const models::Profile ssd = models::profile_from_json(JsonNode(ssd_json, "host-ssd.json"));
  CHECK(host.kind == "host");
  CHECK(host.get("cores") == 2);
  CHECK(host.get("dram_theoretical_bandwidth") * host.get("dram_stream_efficiency") == doctest::Approx(20e9));
  CHECK(host.get("cpu_peak_fp32_flops") == doctest::Approx(160e9));
  CHECK(host.fields.at("cores").source == "calibrated on testhost 2026-01-02: hardware threads used by the measurements");
  CHECK(ssd.get("read_bandwidth") == doctest::Approx(1e9));
  CHECK(ssd.get("write_bandwidth") == doctest::Approx(2e9));
  CHECK(ssd.get("latency") == doctest::Approx(50e-6).scale(0));
  CHECK(ssd.get("read_write_bandwidth") == doctest::Approx(1.5e9));

  // In memory: 28 B/param (read 2 + 12, write 12 + 2) over 20 GB/s; 64M params.  The kernel that
  // runs here decides whether the 2 B copy-out is read for ownership first: the AVX-512 kernel
  // stores around the cache, the AVX2 and scalar ones do not (+2 B/param).  Which one runs is a
  // fact of this machine's CPU, so the expectation follows it.
  const double params = 64.0 * (1 << 20);
  const double in_memory = 28 + (best_isa() == KernelIsa::avx512 ? 0 : 2);
  CHECK(predict_in_memory_step_s(host, params) == doctest::Approx(params * in_memory / 20e9));
  // Out of core: 12 B/param read back and 12 written at once: max(12 / 1 GB/s, 12 / 2 GB/s,
  // 24 / 1.5 GB/s together) = 16 ns/param, longer than the DRAM side (52 B/param staged, 2.6 ns).
  CHECK(predict_out_of_core_step_s(host, ssd, params) == doctest::Approx(params * 24 / 1.5e9));
  // Paired with the state files' own stream rate S for reads, writes and both: 24 B/param over S.
  models::HostSpec paired = models::host_from_profiles(host);
  paired.ssds = models::SsdArray{models::SsdSpec{3e9, 3e9, 1e12, 50e-6, 3e9}, 1};
  CHECK(predict_out_of_core_step_s(paired, params) == doctest::Approx(params * 24 / 3e9));
  // A disk faster than DRAM's staging traffic leaves the step DRAM-bound: 52 B/param over 20 GB/s
  // (and the copy-out's read for ownership where the kernel run here does one).
  paired.ssds = models::SsdArray{models::SsdSpec{100e9, 100e9, 1e12, 50e-6, 100e9}, 1};
  CHECK(predict_out_of_core_step_s(paired, params) == doctest::Approx(params * (52 + in_memory - 28) / 20e9));
  // In memory with a paired DRAM rate of 40 GB/s: 28 B/param (or 30) over it.
  paired.cpu.memory_Bps = 40e9;
  CHECK(predict_in_memory_step_s(paired, params) == doctest::Approx(params * in_memory / 40e9));
}

TEST_CASE("the SSD profile goes beside the host profile") {
  CHECK(ssd_profile_path_for("out/host.json") == "out/host-ssd.json");
  CHECK(ssd_profile_path_for("host") == "host-ssd.json");
}
