// luwusim run and sweep with a scenario's profile overrides: a bad override is exit 2 naming the
// JSON path; a sweep over an override field runs and the override reaches each point's result.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tests/cli/run_command.hpp"

namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& name)
      : path(fs::temp_directory_path() / ("overrides-cli-" + std::to_string(::getpid()) + "-" + name)) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string operator/(const std::string& f) const { return (path / f).string(); }
};

// GPT-3 125M on 2 luwu-star workers under DDP, with `overrides` as the cluster's overrides.
void write_scenario(const std::string& file, const std::string& overrides) {
  std::ofstream(file) << R"({"name": "tiny", "model": "gpt3-125m",
    "training": {"micro_batch": 1, "seq_len": 256, "recompute": true},
    "cluster": {"topology": "luwu-star", "workers": 2, "overrides": )"
                      << overrides << R"(},
    "systems": ["ddp"]})";
}

std::vector<nlohmann::json> json_lines(const std::string& text) {
  std::vector<nlohmann::json> out;
  std::size_t start = 0;
  for (std::size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1)
    out.push_back(nlohmann::json::parse(text.substr(start, end - start)));
  return out;
}

}  // namespace

TEST_CASE("run: a bad override is exit 2 naming the file and the JSON path") {
  TempDir dir("run");
  write_scenario(dir / "range.json", R"({"a100-40gb-sxm": {"collective_interference": 1.5}})");
  auto range = run_luwusim("run " + dir / "range.json");
  CHECK(range.exit_code == 2);
  CHECK(range.err.find("range.json") != std::string::npos);
  CHECK(range.err.find("$.cluster.overrides.a100-40gb-sxm.collective_interference") != std::string::npos);

  write_scenario(dir / "field.json", R"({"samsung-pm1733": {"write_bandwith": "7GB/s"}})");
  auto field = run_luwusim("run " + dir / "field.json");
  CHECK(field.exit_code == 2);
  CHECK(field.err.find("$.cluster.overrides.samsung-pm1733.write_bandwith") != std::string::npos);
  CHECK(field.err.find("did you mean \"write_bandwidth\"") != std::string::npos);

  write_scenario(dir / "dimension.json", R"({"samsung-pm1733": {"write_bandwidth": "7GB"}})");
  auto dimension = run_luwusim("run " + dir / "dimension.json");
  CHECK(dimension.exit_code == 2);
  CHECK(dimension.err.find("$.cluster.overrides.samsung-pm1733.write_bandwidth") != std::string::npos);

  write_scenario(dir / "good.json", R"({"samsung-pm1733": {"write_bandwidth": "7GB/s"}})");
  auto good = run_luwusim("run " + dir / "good.json" + " --json");
  CHECK(good.exit_code == 0);
}

TEST_CASE("sweep: an axis over an override field runs every point with its value") {
  TempDir dir("sweep");
  write_scenario(dir / "base.json", R"({"a100-40gb-sxm": {"dma_interference": 0}})");
  auto r = run_luwusim("sweep " + dir / "base.json" +
                       " --set cluster.overrides.a100-40gb-sxm.collective_interference=0,0.3 --jobs 1 -o " +
                       dir / "out.jsonl");
  REQUIRE(r.exit_code == 0);
  auto lines = json_lines(read_whole_file(dir / "out.jsonl"));
  REQUIRE(lines.size() == 2);
  nlohmann::json by_index[2];
  for (const auto& l : lines) by_index[l["index"].get<int>()] = l;
  CHECK(by_index[0]["point"]["cluster.overrides.a100-40gb-sxm.collective_interference"] == 0);
  CHECK(by_index[1]["input"]["cluster"]["overrides"]["a100-40gb-sxm"]["collective_interference"] == 0.3);
  CHECK(by_index[1]["input"]["cluster"]["overrides"]["a100-40gb-sxm"]["dma_interference"] == 0);
  // models/gpu.hpp: compute overlapped by DDP's all-reduce runs at (1 - share) of its speed, so
  // the point with share 0.3 computes longer, by at most 1 / (1 - 0.3).
  const double none = by_index[0]["results"][0]["breakdown_s"]["compute"].get<double>();
  const double heavy = by_index[1]["results"][0]["breakdown_s"]["compute"].get<double>();
  CHECK(heavy > none);
  CHECK(heavy <= none / (1 - 0.3) * (1 + 1e-9));

  // A bad value on the axis stops the sweep before anything runs, naming the path.
  auto bad = run_luwusim("sweep " + dir / "base.json" +
                         " --set cluster.overrides.a100-40gb-sxm.collective_interference=0.1,2 -o " +
                         dir / "bad.jsonl");
  CHECK(bad.exit_code == 2);
  CHECK(bad.err.find("$.cluster.overrides.a100-40gb-sxm.collective_interference") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "bad.jsonl"));
}
