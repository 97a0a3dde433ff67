// DeepSpeed 0.9.3 stage 3's GPU passes over the gradients around each reduce-scatter
// (sim/systems/stage3_gradient_passes.hpp), against hand-counted bytes.
#include <doctest/doctest.h>

#include <algorithm>
#include <string>
#include <vector>

#include "sim/experiment/simulate.hpp"
#include "sim/systems/stage3_gradient_passes.hpp"
#include "tests/sim/sim_test_support.hpp"

using namespace luwu;
using namespace sim_test;

namespace {

// The bytes charged to each Backward op, in op order.
std::vector<double> backward_bytes(const workloads::Trace& t, const sim::Stage3GradientSettings& s, int world,
                                   bool interleave = true) {
  const auto all = sim::stage3_bucket_pass_bytes(t, s, world, interleave);
  REQUIRE(all.size() == t.ops.size());
  std::vector<double> out;
  for (std::size_t i = 0; i < t.ops.size(); ++i)
    if (t.ops[i].kind == workloads::OpKind::Backward) out.push_back(all[i]);
    else CHECK(all[i] == 0);
  return out;
}

}  // namespace

TEST_CASE("stage-3 bucket passes: the copy into the bucket, the interleave and the pre-divide, per DeepSpeed's rules") {
  const double p = 4e7;  // elements per layer, one gradient tensor each, 2 B per element
  const auto trace = synthetic_trace(6, 40'000'000, 1e12);
  REQUIRE(workloads::bytes_per_element(trace.training.dtype) == 2);
  sim::Stage3GradientSettings s;  // 5e8 elements per bucket: all six (2.4e8) in one
  // Each copied in (read 2 B, write 2 B), interleaved by torch.cat (4 B) and divided in place (4 B).
  for (double b : backward_bytes(trace, s, 4)) CHECK(b == 12 * p);
  // Buckets of 1e8: two layers each (the third would overflow), every one still copied and interleaved.
  s.reduce_bucket_size = 1e8;
  for (double b : backward_bytes(trace, s, 4)) CHECK(b == 12 * p);
  // A bucket of exactly one layer: a gradient is copied only if it fits beside what the bucket holds
  // (4e7 + 0 < 4e7 fails), and a bucket of one tensor of a multiple of the world size is reduced in
  // place: the pre-divide alone.
  s.reduce_bucket_size = p;
  for (double b : backward_bytes(trace, s, 4)) CHECK(b == 4 * p);
  // 4e7 is not a multiple of 3: padded, so interleaved too.
  for (double b : backward_bytes(trace, s, 3)) CHECK(b == 8 * p);
  // contiguous_gradients off: no copy into the bucket; a reduction that is not
  // reduce_scatter_coalesced (interleave false): no interleave and no pre-divide.
  s = {};
  s.contiguous_gradients = false;
  for (double b : backward_bytes(trace, s, 4)) CHECK(b == 8 * p);
  s = {};
  for (double b : backward_bytes(trace, s, 4, false)) CHECK(b == 4 * p);
}

TEST_CASE("stage-3 bucket passes: each micro-step's backward empties its bucket at its end") {
  // Three layers, buckets of 1e8 (two layers), two micro-steps: layers 3 and 2 share a bucket; layer
  // 1's is reduced alone at the micro-step's end (independent_gradient_partition_epilogue), in
  // place, as one tensor of a multiple of the world size, not interleaved with the next
  // micro-step's layer 3.
  const double p = 4e7;
  const auto trace = synthetic_trace(3, 40'000'000, 1e12, 2);
  sim::Stage3GradientSettings s;
  s.reduce_bucket_size = 1e8;
  const auto bytes = backward_bytes(trace, s, 4);
  REQUIRE(bytes.size() == 6);
  for (int m = 0; m < 2; ++m) {
    CHECK(bytes[3 * m + 0] == 12 * p);
    CHECK(bytes[3 * m + 1] == 12 * p);
    CHECK(bytes[3 * m + 2] == 8 * p);  // copied in (4 B) and divided (4 B), not interleaved
  }
}

TEST_CASE("stage-3 partition passes: the inf/nan checks, the accumulation, the fp64 norm and the fp32 copy") {
  using sim::stage3_partition_pass_bytes_per_element;
  // bf16: isinf and isnan each read 2 B and write and read a 1 B bool = 8 B.
  // On the GPU (ZeRO-3): copied into the partition (4 B), or added to it from the second micro-step (6 B).
  CHECK(stage3_partition_pass_bytes_per_element(2, false, 0, true) == 12);
  CHECK(stage3_partition_pass_bytes_per_element(2, false, 1, false) == 14);
  // Offloaded (ZeRO-Infinity): the checks alone before the boundary; the host's partition added to on
  // the GPU from the second micro-step (6 B); at the boundary the fp64 norm (.double(): 2 + 8,
  // norm: 8) and .float() (2 + 4).
  CHECK(stage3_partition_pass_bytes_per_element(2, true, 0, false) == 8);
  CHECK(stage3_partition_pass_bytes_per_element(2, true, 0, true) == 8 + 18 + 6);
  CHECK(stage3_partition_pass_bytes_per_element(2, true, 1, true) == 8 + 6 + 18 + 6);
  // fp32: .float() is the tensor itself; the checks 2 (4 + 2), the norm 4 + 16.
  CHECK(stage3_partition_pass_bytes_per_element(4, true, 0, true) == 12 + 20);
}

TEST_CASE("stage-3 gradient passes run on their own stream around each reduce-scatter, at the GPU's HBM rate") {
  // Four layers of 4e7 parameters on 2 workers: one bucket, so each layer's gradient is copied in,
  // interleaved and divided (12 B per element) before its reduce-scatter; after it, ZeRO-Infinity
  // checks its 2e7-element partition, takes the fp64 norm and the fp32 copy (32 B per element),
  // ZeRO-3 checks it and copies it into its partition (12 B per element).  Each reduce-scatter
  // starts after its bucket's passes and before its partition's.
  auto topo = star(2);
  const auto hw = sim::hardware_of(topo);
  const double hbm = hw.gpu.achieved_hbm_Bps(), p = 4e7;
  sim::SimulationOptions options;
  options.record_timeline = true;
  for (const auto& [system, settings, after_bytes] :
       {std::tuple{"zero-infinity", Json{{"offload", "dram"}, {"param_fetch", "layer"}}, 32 * p / 2},
        std::tuple{"zero3", Json{{"param_fetch", "layer"}}, 12 * p / 2}}) {
    CAPTURE(system);
    auto r = sim::simulate_system(synthetic_trace(4, 40'000'000, 2e14), topo, hw, *make_system(system, settings), options);
    REQUIRE(r.feasible);
    std::vector<sim_test::TrackSpan> scatters;
    for (const auto& c : track_spans(r.timeline, "gpu0", "collectives"))
      if (c.name.rfind("reduce-scatter", 0) == 0) scatters.push_back(c);
    REQUIRE(scatters.size() == 4);
    int before = 0, after = 0;
    for (const auto& c : track_spans(r.timeline, "gpu0", "reduce-and-partition")) {
      const auto& rs = scatters[static_cast<std::size_t>(std::min(before, after))];
      if (before == after) CHECK(c.end_s <= rs.start_s + 1e-6);  // a bucket's passes, then its reduce-scatter
      else CHECK(c.start_s >= rs.end_s - 1e-6);                  // then its partition's
      if (c.name.rfind("gradient bucket copies", 0) == 0) {
        ++before;
        CHECK(c.end_s - c.start_s == doctest::Approx(12 * p / hbm).epsilon(1e-4));
      }
      if (c.name.rfind("gradient partition checks", 0) == 0) {
        ++after;
        CHECK(c.end_s - c.start_s == doctest::Approx(after_bytes / hbm).epsilon(1e-4));
      }
    }
    CHECK(before == 4);
    CHECK(after == 4);
    // "gradient_passes": false, the ablation: none.
    Json off = settings;
    off["gradient_passes"] = false;
    auto none = sim::simulate_system(synthetic_trace(4, 40'000'000, 2e14), topo, hw, *make_system(system, off), options);
    CHECK(track_spans(none.timeline, "gpu0", "reduce-and-partition").empty());
    CHECK(none.iteration_time_s < r.iteration_time_s);
  }
  CHECK(system_settings_error("zero3", {{"reduce_bucket_size", 0}}).find("$.systems[0].reduce_bucket_size") != std::string::npos);
  CHECK(system_settings_error("zero-infinity", {{"contiguous_gradients", "yes"}}).find("$.systems[0].contiguous_gradients") !=
        std::string::npos);
}
