// A host's memory bus as a shared rate (sim/engine/pacing_host.hpp) under the out-of-core
// pipeline (sim/systems/out_of_core_pipeline.hpp), LuWu's optimizer node's DRAM: when the DRAM is
// the bottleneck, however the pipeline's stages overlap, the step takes all the bytes that cross
// DRAM over its bandwidth.
//
// The toy: a host whose disk reads and writes at 10 GB/s, a memory bus of 1 GB/s, and two units,
// each reading 1 GB of state, updating (0.1 s of CPU, 2 GB through DRAM) and writing 1 GB back.
// Everything crosses the bus: 2 x (1 + 2 + 1) GB = 8 GB, and with a read ahead some stage always
// has bytes to move, so the step takes 8 s.  Without the bus the disks bound it: 4 x 0.1 s of
// I/O and 2 x 0.1 s of update, partly overlapped.
#include <doctest/doctest.h>

#include <cstdio>
#include <string>

#include <simgrid/s4u.hpp>

#include "sim/engine/engine_config.hpp"
#include "sim/engine/pacing_host.hpp"
#include "sim/experiment/isolated_run.hpp"
#include "sim/systems/out_of_core_pipeline.hpp"

namespace sg = simgrid::s4u;
using namespace luwu::sim;

namespace {

double run_pipeline(bool with_bus) {
  auto result = run_isolated([=]() -> std::string {
    auto engine = make_engine();
    auto* zone = sg::create_full_zone("node");
    auto* host = zone->create_host("node", 1e9);
    auto* disk = host->create_disk("ssd", 10e9, 10e9);
    sg::Host* bus = with_bus ? make_pacing_host("node/memory bus", {1e9}) : nullptr;
    zone->seal();
    auto* traffic = new TrafficMeter();
    auto* finish = new double(0);
    sg::Actor::create("layout", host, [=] {
      auto* pipeline = new OutOfCorePipeline("node", host, {disk}, OutOfCorePolicy{.read_ahead = 1}, *traffic, nullptr);
      pipeline->set_memory_bus(bus);
      for (int k = 0; k < 2; ++k) pipeline->add_unit("unit " + std::to_string(k), 1e9, 0.1, 1e9, {}, 2e9);
      for (const auto& done : pipeline->write_backs()) done->wait();
      *finish = sg::Engine::get_clock();
    });
    engine->run();
    char text[32];
    std::snprintf(text, sizeof text, "%.17g", *finish);
    return text;
  });
  CAPTURE(result.output);
  REQUIRE(result.ok);
  return std::stod(result.output);
}

}  // namespace

TEST_CASE("a DRAM-bound out-of-core step takes every byte that crosses DRAM over its bandwidth") {
  CHECK(run_pipeline(true) == doctest::Approx(8.0).epsilon(1e-9));
  // Without the bus, reads and writes at 10 GB/s and 0.1 s updates: well under a second.
  CHECK(run_pipeline(false) < 1.0);
}
