// `luwusim run --timeline` (docs/timeline.md): spans with args, link counter tracks bounded by
// --timeline-counter-points, the same file from the same inputs.
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "tests/cli/run_command.hpp"

using nlohmann::json;

namespace {

const char* const kScenario = R"({"model": "gpt3-125m", "training": {"micro_batch": 1, "seq_len": 256},
  "cluster": {"topology": "luwu-star", "workers": 2}, "systems": ["zero3", "ddp"]})";

json timeline(const std::string& extra) {
  {
    std::ofstream("tl-cli.json") << kScenario;
  }
  auto r = run_luwusim("run tl-cli.json --timeline tl-cli-out.json " + extra);
  CAPTURE(r.err);
  REQUIRE(r.exit_code == 0);
  auto j = json::parse(read_whole_file("tl-cli-out.json"));
  std::remove("tl-cli-out.json");
  std::remove("tl-cli.json");
  return j;
}

// Counter events per (process, link).
std::map<std::pair<int, std::string>, int> counter_points(const json& trace) {
  std::map<std::pair<int, std::string>, int> n;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "C") ++n[{e["pid"].get<int>(), e["name"].get<std::string>()}];
  return n;
}

// The spans, each with its process's name in place of its pid (a run without counter tracks has
// fewer processes, so the second system's pids differ).
json spans(const json& trace) {
  std::map<int, std::string> process;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "process_name") process[e["pid"].get<int>()] = e["args"]["name"];
  json out = json::array();
  for (auto e : trace["traceEvents"])
    if (e["ph"] == "X") {
      e["pid"] = process[e["pid"].get<int>()];
      out.push_back(e);
    }
  return out;
}

}  // namespace

TEST_CASE("run --timeline: spans carry bytes and FLOPs with their rates, each system's links get counter tracks") {
  const auto trace = timeline("");
  int with_bytes = 0, with_flops = 0;
  for (const auto& e : spans(trace)) {
    if (!e.contains("args")) continue;
    if (e["args"].contains("bytes")) {
      ++with_bytes;
      CHECK(e["args"]["bytes"].get<double>() > 0);
      if (e["dur"].get<double>() > 0)
        CHECK(e["args"]["rate_Bps"].get<double>() ==
              doctest::Approx(e["args"]["bytes"].get<double>() / (e["dur"].get<double>() * 1e-6)));
    }
    if (e["args"].contains("flops")) {
      ++with_flops;
      CHECK(e["cat"] == "compute");
      CHECK(e["args"].contains("rate_flops_per_s"));
    }
  }
  CHECK(with_bytes > 0);   // the collectives
  CHECK(with_flops > 0);   // the GEMMs
  const auto points = counter_points(trace);
  CHECK(!points.empty());
  std::map<int, std::string> process;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "process_name") process[e["pid"].get<int>()] = e["args"]["name"];
  bool zero3 = false, ddp = false;
  for (const auto& [key, n] : points) {
    zero3 |= process[key.first] == "zero3/links";
    ddp |= process[key.first] == "ddp/links";
    CHECK(n >= 2);
  }
  CHECK(zero3);
  CHECK(ddp);
}

TEST_CASE("run --timeline-counter-points bounds each counter track, 0 writes none, spans do not change") {
  const auto full = timeline("");
  const auto three = timeline("--timeline-counter-points 3");
  const auto none = timeline("--timeline-counter-points 0");
  for (const auto& [key, n] : counter_points(three)) CHECK(n <= 3);
  CHECK(counter_points(three).size() == counter_points(full).size());
  CHECK(counter_points(none).empty());
  CHECK(spans(none) == spans(full));
  CHECK(spans(three) == spans(full));
  CHECK(run_luwusim("run tl-no-such.json --timeline t.json --timeline-counter-points -1").exit_code == 2);
}

TEST_CASE("run --timeline: the same inputs write the same file") {
  CHECK(timeline("").dump() == timeline("").dump());
}
