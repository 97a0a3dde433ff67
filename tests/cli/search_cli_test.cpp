// luwusim search on a tiny scenario, held against brute force: `luwusim run` of every candidate
// on its own picks the same best configuration with the same throughput, and the search skipped
// only candidates that could not have beaten it (their compute bound is at most the best).
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include "tests/cli/run_command.hpp"

namespace fs = std::filesystem;

namespace {

struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& name)
      : path(fs::temp_directory_path() / ("search-cli-" + std::to_string(::getpid()) + "-" + name)) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string operator/(const std::string& f) const { return (path / f).string(); }
};

nlohmann::json tiny_scenario() {
  return nlohmann::json::parse(R"({"name": "tiny", "model": "gpt3-125m",
    "training": {"micro_batch": 1, "seq_len": 256, "recompute": true},
    "cluster": {"topology": "luwu-star", "workers": 2, "network": "100Gb/s"},
    "systems": ["ddp", "zero3"]})");
}

}  // namespace

TEST_CASE("search: the best configuration is brute force's, and only candidates whose bound cannot beat it are skipped") {
  TempDir dir("best");
  const std::string scenario = dir / "tiny.json";
  std::ofstream(scenario) << tiny_scenario().dump();
  auto r = run_luwusim("search " + scenario + " --micro-batch 1,2 --recompute both --json -j 2 --top 8");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto out = nlohmann::json::parse(r.out);
  REQUIRE(out["candidates"].size() == 8);  // 2 systems x 2 micro-batches x recompute on/off

  // Brute force: every candidate through `luwusim run`.
  double best_tokens = 0;
  std::string best_key;
  std::map<std::string, double> tokens_of;
  for (const std::string system : {"ddp", "zero3"})
    for (int mb : {1, 2})
      for (bool recompute : {true, false}) {
        auto s = tiny_scenario();
        s["systems"] = {system};
        s["training"]["micro_batch"] = mb;
        s["training"]["recompute"] = recompute;
        const std::string file = dir / (system + std::to_string(mb) + (recompute ? "r" : "") + ".json");
        std::ofstream(file) << s.dump();
        auto one = run_luwusim("run " + file + " --json");
        REQUIRE_MESSAGE(one.exit_code == 0, one.err);
        const auto result = nlohmann::json::parse(one.out)["results"][0];
        REQUIRE(result["feasible"] == true);
        const std::string key = system + "/" + std::to_string(mb) + "/" + (recompute ? "on" : "off");
        tokens_of[key] = result["tokens_per_s"].get<double>();
        if (tokens_of[key] > best_tokens) {
          best_tokens = tokens_of[key];
          best_key = key;
        }
      }

  const auto& best = out["best"][0];
  CHECK(best["system"].get<std::string>() + "/" + std::to_string(best["micro_batch"].get<int>()) + "/" +
            (best["recompute"].get<bool>() ? "on" : "off") ==
        best_key);
  CHECK(best["result"]["tokens_per_s"].get<double>() == best_tokens);
  for (const auto& c : out["candidates"]) {
    const std::string key = c["system"].get<std::string>() + "/" + std::to_string(c["micro_batch"].get<int>()) + "/" +
                            (c["recompute"].get<bool>() ? "on" : "off");
    // The bound is one: no candidate's throughput beats it.
    CHECK(tokens_of[key] <= c["bound_tokens_per_s"].get<double>());
    if (c["outcome"] == "pruned by bound") CHECK(c["bound_tokens_per_s"].get<double>() <= best_tokens);
    if (c["outcome"] == "simulated") CHECK(c["result"]["tokens_per_s"].get<double>() == tokens_of[key]);
    CHECK((c["outcome"] == "simulated" || c["outcome"] == "pruned by bound"));
  }
}

TEST_CASE("search: a candidate that does not fit says why and is not simulated, the table names the best") {
  TempDir dir("fit");
  const std::string scenario = dir / "tiny.json";
  std::ofstream(scenario) << tiny_scenario().dump();
  // Micro-batch 4096 without recompute needs hundreds of GB of activations on a 40 GB GPU.
  auto r = run_luwusim("search " + scenario + " --micro-batch 1,4096 --recompute off --system ddp --json -j 2");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto out = nlohmann::json::parse(r.out);
  REQUIRE(out["candidates"].size() == 2);
  CHECK(out["candidates"][1]["outcome"] == "does not fit");
  CHECK(!out["candidates"][1]["reason"].get<std::string>().empty());
  CHECK(out["best"][0]["micro_batch"] == 1);

  auto table = run_luwusim("search " + scenario + " --micro-batch 1,4096 --recompute off --system ddp -j 2");
  REQUIRE_MESSAGE(table.exit_code == 0, table.err);
  CHECK(table.out.find("ddp") != std::string::npos);
  CHECK(table.out.find("1 do not fit") != std::string::npos);
}

TEST_CASE("search: bad arguments are errors with exit code 2") {
  TempDir dir("bad");
  const std::string scenario = dir / "tiny.json";
  std::ofstream(scenario) << tiny_scenario().dump();
  auto no_system = run_luwusim("search " + scenario + " --system nosuch");
  CHECK(no_system.exit_code == 2);
  CHECK(no_system.err.find("--system") != std::string::npos);
  CHECK(run_luwusim("search " + scenario + " --recompute maybe").exit_code == 2);
  CHECK(run_luwusim("search " + scenario + " --micro-batch 0").exit_code == 2);
  CHECK(run_luwusim("search " + dir / "missing.json").exit_code == 2);
}

TEST_CASE("search over tensor and pipeline degrees: layouts that do not divide the GPUs say so, the best is brute force's") {
  TempDir dir("layouts");
  auto base = nlohmann::json::parse(R"({"name": "layouts", "model": "gpt3-125m",
    "training": {"micro_batch": 1, "seq_len": 256, "grad_accum": 4, "recompute": true},
    "cluster": {"topology": "dgx", "servers": 1, "gpus_per_server": 4, "network": "100Gb/s"},
    "systems": ["ddp"]})");
  const std::string scenario = dir / "layouts.json";
  std::ofstream(scenario) << base.dump();
  auto r = run_luwusim("search " + scenario + " --tensor 1,2,4 --pipeline 1,2,3 --micro-batch 1 --recompute on --json -j 2");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto out = nlohmann::json::parse(r.out);
  REQUIRE(out["candidates"].size() == 9);
  double best_tokens = 0;
  std::string best_key;
  for (const auto& c : out["candidates"]) {
    const int t = c["tensor"], p = c["pipeline"];
    const std::string key = std::to_string(t) + "x" + std::to_string(p);
    CAPTURE(key);
    if (4 % (t * p) != 0) {
      CHECK(c["outcome"] == "does not fit");
      CHECK(c["reason"].get<std::string>().find("parallelism") != std::string::npos);
      continue;
    }
    auto s = base;
    s["parallelism"] = {{"tensor", t}, {"pipeline", p}};
    const std::string file = dir / (key + ".json");
    std::ofstream(file) << s.dump();
    auto one = run_luwusim("run " + file + " --json");
    REQUIRE_MESSAGE(one.exit_code == 0, one.err);
    const double tokens = nlohmann::json::parse(one.out)["results"][0]["tokens_per_s"];
    CHECK(tokens <= c["bound_tokens_per_s"].get<double>());
    if (c["outcome"] == "simulated") CHECK(c["result"]["tokens_per_s"].get<double>() == tokens);
    if (tokens > best_tokens) {
      best_tokens = tokens;
      best_key = key;
    }
  }
  const auto& best = out["best"][0];
  CHECK(std::to_string(best["tensor"].get<int>()) + "x" + std::to_string(best["pipeline"].get<int>()) == best_key);
  CHECK(best["result"]["tokens_per_s"].get<double>() == best_tokens);
}

TEST_CASE("search: a fold that would not be exact is refused per candidate, not called 'does not fit'") {
  TempDir dir("fold");
  const std::string scenario = dir / "folded.json";
  // 8 servers of 2 GPUs on a fat-tree under ECMP, each data-parallel group folded to 4: the
  // spines are shared, so the fold is not exact (docs/performance.md, Folding).
  auto s = tiny_scenario();
  s["cluster"] = {{"topology", "fat-tree"}, {"servers", 8}, {"gpus_per_server", 2}};
  s["simulation"] = {{"fold_data_parallel", 4}};
  s["systems"] = {"ddp"};
  std::ofstream(scenario) << s.dump();
  auto r = run_luwusim("search " + scenario + " --micro-batch 1 --recompute on --json -j 2");
  REQUIRE_MESSAGE(r.exit_code == 0, r.err);
  const auto out = nlohmann::json::parse(r.out);
  REQUIRE(out["candidates"].size() == 1);
  CHECK(out["candidates"][0]["outcome"] == "refused");
  CHECK(out["candidates"][0]["reason"].get<std::string>().find("allow_inexact_fold") != std::string::npos);
  auto table = run_luwusim("search " + scenario + " --micro-batch 1 --recompute on -j 2");
  CHECK(table.out.find("1 refused") != std::string::npos);
}
