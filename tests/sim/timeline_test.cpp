// The timeline's args and counter tracks (sim/engine/timeline.hpp, docs/timeline.md) against
// values derived by hand.
//
// The toy: two hosts on a star, each behind a split-duplex link of bandwidth BW = 10 GB/s and
// 1 us latency, so a flow from one to the other crosses link0 (up) and link1 (down) with 2 us of
// latency.  Alone, a flow of B = 1 GB takes 2 us + B / BW = 0.100002 s (CM02 with the factors at
// 1, sim/engine/engine_config.hpp), so it achieves B / 0.100002 s, i.e. a utilization of
// 1 / 1.00002 of each link, from its start to its end.
#include <doctest/doctest.h>

#include <map>
#include <string>
#include <vector>

#include <simgrid/s4u.hpp>

#include "common/json_input.hpp"
#include "sim/engine/collectives.hpp"
#include "sim/engine/engine_config.hpp"
#include "sim/engine/gpu_device.hpp"
#include "sim/engine/stream.hpp"
#include "sim/engine/timeline.hpp"
#include "sim/engine/transfers.hpp"
#include "sim/experiment/isolated_run.hpp"
#include "sim/experiment/simulate.hpp"
#include "tests/sim/sim_test_support.hpp"

namespace sg = simgrid::s4u;
using namespace luwu::sim;

namespace {

constexpr double kBW = 10e9, kHopLatency = 1e-6, kB = 1e9, kFlops = 3e12, kKernelS = 0.25;

enum class Work { Transfer, AllGather, Kernel, DiskRead };
constexpr double kDiskRead = 2e9, kDiskWrite = 1e9;  // bytes/s, each of gpu0's two disks

// Runs the toy in its own process with the timeline on or off; returns the Chrome trace it wrote
// (counter tracks with at most `points` points) and, after a newline, the number of spans and
// counter tracks recorded.
std::string run_toy(Work work, bool enabled, std::size_t points = kDefaultTimelineCounterPoints) {
  auto result = run_isolated([=]() -> std::string {
    auto engine = make_engine();
    auto* zone = sg::create_star_zone("star");
    std::vector<sg::Host*> hosts;
    for (int i = 0; i < 2; ++i) {
      auto* h = zone->create_host("gpu" + std::to_string(i), 1e12);
      auto* l = zone->create_split_duplex_link("link" + std::to_string(i), kBW)->set_latency(kHopLatency);
      zone->add_route(h->get_netpoint(), nullptr, nullptr, nullptr, {{l, sg::LinkInRoute::Direction::UP}}, true);
      hosts.push_back(h);
    }
    auto* timeline = new Timeline(enabled);
    auto* meter = new TrafficMeter();
    meter->attach_timeline(timeline);
    luwu::models::GpuSpec spec;
    spec.hbm_Bps = 1e13;
    auto* gpu = new GpuDevice(0, hosts[0], spec, timeline);
    std::vector<sg::Disk*> disks;
    for (int d = 0; d < 2; ++d) disks.push_back(hosts[0]->create_disk("disk" + std::to_string(d), kDiskRead, kDiskWrite));
    zone->seal();
    CommGroup group{"world", hosts, {}};
    for (int i = 0; i < 2; ++i) {
      sg::Actor::create("rank" + std::to_string(i), hosts[i], [=] {
        if (work == Work::Kernel) {
          if (i > 0) return;
          static const luwu::workloads::Kernel gemm{.name = "gemm", .kind = luwu::workloads::KernelKind::Gemm, .flops = kFlops};
          static const luwu::workloads::Kernel add{.name = "add", .kind = luwu::workloads::KernelKind::Elementwise, .bytes = 1e9};
          const std::vector<KernelRun> kernels{KernelRun{&gemm, kKernelS, 1.0, true}, KernelRun{&add, kKernelS, 1.0, false}};
          gpu->run_kernels("forward L0", kernels);
          return;
        }
        auto* stream = new Stream("gpu" + std::to_string(i), "comm", "communication", hosts[i], timeline);
        if (work == Work::DiskRead) {
          if (i == 0) stream->enqueue("read", [=] { read_striped(disks, kB, *meter); })->wait();
          return;
        }
        if (work == Work::Transfer) {
          if (i == 0) stream->enqueue("send", [=] { transfer(hosts[0], hosts[1], kB, *meter); })->wait();
          return;
        }
        stream->enqueue("all-gather", [=] {
          ring_all_gather(group, i, 2 * kB, CollectiveContext{CollectiveMode::Detailed, meter});
        })->wait();
      });
    }
    engine->run();
    for (auto& track : meter->link_counters(points)) timeline->add_counter(std::move(track));
    for (auto& track : meter->disk_counters(points)) timeline->add_counter(std::move(track));
    return timeline->to_chrome_trace().dump() + "\n" + std::to_string(timeline->spans().size()) + " " +
           std::to_string(timeline->counters().size());
  });
  CAPTURE(result.output);
  REQUIRE(result.ok);
  return result.output;
}

luwu::Json trace_of(const std::string& output) { return luwu::Json::parse(output.substr(0, output.find('\n'))); }

std::vector<luwu::Json> events(const luwu::Json& trace, const std::string& ph) {
  std::vector<luwu::Json> out;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == ph) out.push_back(e);
  return out;
}

}  // namespace

TEST_CASE("timeline: a transfer alone carries its bytes and rate, its links' counters step up at its start, to 0 at its end") {
  const auto trace = trace_of(run_toy(Work::Transfer, true));
  const auto spans = events(trace, "X");
  REQUIRE(spans.size() == 1);
  const auto& span = spans[0];
  CHECK(span["name"] == "send");
  const double duration_s = 2 * kHopLatency + kB / kBW;  // 0.100002 s
  CHECK(span["ts"].get<double>() == 0.0);
  CHECK(span["dur"].get<double>() * 1e-6 == doctest::Approx(duration_s).epsilon(1e-12));
  CHECK(span["args"]["bytes"].get<double>() == kB);
  CHECK(span["args"]["rate_Bps"].get<double>() == doctest::Approx(kB / duration_s).epsilon(1e-12));
  CHECK_FALSE(span["args"].contains("flops"));

  // Each link of the route: one counter track, up to B / duration over BW at 0, down to 0 at the end.
  const auto counters = events(trace, "C");
  REQUIRE(counters.size() == 4);
  std::vector<std::string> names;
  for (const auto& c : counters) names.push_back(c["name"]);
  CHECK(names == std::vector<std::string>{"link0_UP", "link0_UP", "link1_DOWN", "link1_DOWN"});
  for (std::size_t i = 0; i < 4; i += 2) {
    CHECK(counters[i]["ts"].get<double>() == 0.0);
    CHECK(counters[i]["args"]["utilization"].get<double>() == doctest::Approx(kB / duration_s / kBW).epsilon(1e-12));
    CHECK(counters[i + 1]["ts"].get<double>() == span["dur"].get<double>());
    CHECK(counters[i + 1]["args"]["utilization"].get<double>() == 0.0);
  }
  // The counters are drawn in a process of their own.
  bool named = false;
  for (const auto& e : events(trace, "M"))
    if (e["name"] == "process_name" && e["pid"] == counters[0]["pid"]) named = e["args"]["name"] == "links";
  CHECK(named);
}

TEST_CASE("timeline: a ring all-gather's span carries the bytes its rank sent") {
  // 2 ranks, a 2 GB buffer: one ring step of 1 GB each way, both links of each host busy.
  const auto trace = trace_of(run_toy(Work::AllGather, true));
  const auto spans = events(trace, "X");
  REQUIRE(spans.size() == 2);
  for (const auto& s : spans) {
    CHECK(s["args"]["bytes"].get<double>() == kB);
    CHECK(s["args"]["rate_Bps"].get<double>() == doctest::Approx(kB / (s["dur"].get<double>() * 1e-6)));
  }
  CHECK(events(trace, "C").size() == 8);  // link0 and link1, up and down, each up then down
}

TEST_CASE("timeline: a GEMM carries its FLOPs and FLOP rate, an elementwise kernel none") {
  const auto trace = trace_of(run_toy(Work::Kernel, true));
  const auto spans = events(trace, "X");
  REQUIRE(spans.size() == 2);
  CHECK(spans[0]["name"] == "forward L0: gemm");
  CHECK(spans[0]["args"]["flops"].get<double>() == kFlops);
  CHECK(spans[0]["args"]["rate_flops_per_s"].get<double>() == doctest::Approx(kFlops / kKernelS).epsilon(1e-12));
  CHECK_FALSE(spans[0]["args"].contains("bytes"));
  CHECK(spans[1]["name"] == "forward L0: add");
  CHECK_FALSE(spans[1].contains("args"));  // as before: no amount, no args
  CHECK(events(trace, "C").empty());       // no flow, no counter
}

TEST_CASE("timeline: a striped read carries all disks' bytes, each disk's read counter is 1 while it reads") {
  // B over two disks of 2 GB/s each: B/2 per disk, 0.25 s, both at their full read bandwidth.
  const auto trace = trace_of(run_toy(Work::DiskRead, true));
  const auto spans = events(trace, "X");
  REQUIRE(spans.size() == 1);
  CHECK(spans[0]["args"]["bytes"].get<double>() == kB);
  CHECK(spans[0]["dur"].get<double>() * 1e-6 == doctest::Approx(kB / 2 / kDiskRead).epsilon(1e-12));
  const auto counters = events(trace, "C");
  REQUIRE(counters.size() == 4);
  for (std::size_t i = 0; i < 4; i += 2) {
    CHECK(counters[i]["name"] == "disk" + std::to_string(i / 2) + ":read");
    CHECK(counters[i]["ts"].get<double>() == 0.0);
    CHECK(counters[i]["args"]["utilization"].get<double>() == doctest::Approx(1.0).epsilon(1e-12));
    CHECK(counters[i + 1]["ts"].get<double>() == spans[0]["dur"].get<double>());
    CHECK(counters[i + 1]["args"]["utilization"].get<double>() == 0.0);
  }
}

TEST_CASE("timeline: disabled, nothing is recorded") {
  for (Work work : {Work::Transfer, Work::AllGather, Work::Kernel, Work::DiskRead}) {
    const auto output = run_toy(work, false);
    CHECK(output.substr(output.find('\n') + 1) == "0 0");
    CHECK(events(trace_of(output), "X").empty());
  }
  Timeline off(false);
  off.open_amounts(1);
  off.attribute_bytes(1, 5);
  CHECK(off.close_amounts(1) == 0);
  off.add("gpu0", "compute", "k", "compute", 0, 1, SpanAmounts{1, 2});
  off.add_counter({"links", "l", "utilization", {{0, 1}, {1, 0}}});
  CHECK(off.spans().empty());
  CHECK(off.counters().empty());
}

TEST_CASE("timeline: the same inputs give the same trace, bit for bit") {
  CHECK(run_toy(Work::AllGather, true) == run_toy(Work::AllGather, true));
  CHECK(run_toy(Work::Transfer, true, 2) == run_toy(Work::Transfer, true, 2));
}

TEST_CASE("timeline: a link's counter integrates to the bytes the link carried, and results do not change") {
  // Utilization x bandwidth over time is the flow-average rate, whose integral is each flow's
  // bytes: the area under every link's track is the link's bytes in the results.
  auto topo = sim_test::star(2);
  const auto hw = sim_test::quiet_hardware(topo);
  const auto trace = sim_test::synthetic_trace(3, 20'000'000, 1e13);
  for (const char* system : {"luwu", "zero3", "ddp", "zero-offload"}) {
    CAPTURE(system);
    luwu::sim::SimulationOptions options;
    options.record_timeline = true;
    options.timeline_counter_points = 1'000'000;  // exact steps
    const auto with = luwu::sim::simulate_system(trace, topo, hw, *sim_test::make_system(system), options);
    REQUIRE(with.feasible);
    options.record_timeline = false;
    const auto without = luwu::sim::simulate_system(trace, topo, hw, *sim_test::make_system(system), options);
    CHECK(luwu::sim::result_to_json(with).dump() == luwu::sim::result_to_json(without).dump());
    std::map<std::string, double> area;
    std::map<std::string, std::pair<double, double>> last;  // the point before, per link
    for (const auto& e : events(with.timeline, "C")) {
      const std::string name = e["name"];
      const double t = e["ts"].get<double>() * 1e-6, u = e["args"]["utilization"].get<double>();
      if (auto it = last.find(name); it != last.end()) area[name] += it->second.second * (t - it->second.first);
      last[name] = {t, u};
    }
    REQUIRE_FALSE(with.links.empty());
    // A track per link, and one per SSD direction where the system touches SSDs ("<disk>:read").
    std::size_t disk_tracks = 0;
    for (const auto& [name, a] : area) {
      const auto colon = name.rfind(':');
      disk_tracks += colon != std::string::npos && (name.substr(colon) == ":read" || name.substr(colon) == ":write");
    }
    CHECK(area.size() == with.links.size() + disk_tracks);
    for (const auto& link : with.links) {
      CAPTURE(link.link);
      CHECK(last[link.link].second == 0.0);
      CHECK(area[link.link] * link.bandwidth_Bps == doctest::Approx(link.bytes).epsilon(1e-9));
    }
  }
}

TEST_CASE("timeline: step functions from flow intervals") {
  SUBCASE("overlapping flows add; a return to no flow is exactly 0") {
    // A: 0.1 B/s over [0, 3); B: 0.2 B/s over [1, 2); C: 0.7 over [3, 4) (A's end and C's start at once).
    auto steps = step_function({{0, 0.1}, {3, -0.1}, {1, 0.2}, {2, -0.2}, {3, 0.7}, {4, -0.7}}, 100);
    using P = std::pair<double, double>;
    REQUIRE(steps.size() == 5);
    CHECK(steps[0] == P{0, 0.1});
    CHECK(steps[1].first == 1);
    CHECK(steps[1].second == doctest::Approx(0.3));
    CHECK(steps[2].first == 2);
    CHECK(steps[2].second == doctest::Approx(0.1));
    CHECK(steps[3].first == 3);
    CHECK(steps[3].second == doctest::Approx(0.7));
    CHECK(steps[4] == P{4, 0.0});
  }
  SUBCASE("beyond the cap, equal bins keep the area (the bytes)") {
    // 1000 flows of rate 1 over [2k, 2k+1): area 1000 over [0, 1999].
    std::vector<std::pair<double, double>> deltas;
    for (int k = 0; k < 1000; ++k) {
      deltas.emplace_back(2.0 * k, 1.0);
      deltas.emplace_back(2.0 * k + 1, -1.0);
    }
    const auto exact = step_function(deltas, 10'000);
    CHECK(exact.size() == 2000);
    const auto binned = step_function(deltas, 11);
    CHECK(binned.size() <= 11);
    double area = 0;
    for (std::size_t i = 0; i + 1 < binned.size(); ++i) area += binned[i].second * (binned[i + 1].first - binned[i].first);
    CHECK(area == doctest::Approx(1000.0));
    CHECK(binned.back().second == 0.0);
    CHECK(binned.back().first == 1999.0);
    for (std::size_t i = 0; i + 1 < binned.size(); ++i) CHECK(binned[i].second == doctest::Approx(0.5).epsilon(0.01));
  }
}
