// #20's frictions: the run CSV names the model and training of each row, the sweep CSV each
// system's kind and settings (a label alone does not say what a variant is) and its time against
// the first system, and the progress line counts
// the point that takes a freed process as running.
#include <doctest/doctest.h>

#include <filesystem>
#include <unistd.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/cli/run_command.hpp"

namespace {

const std::string kScenario = std::string(LUWUSIM_SOURCE_DIR) + "/scenarios/small-zero3-vs-ddp.json";

std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> out;
  std::string field;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {  // RFC 4180: "" inside quotes is a quote
    const char c = line[i];
    if (c == '"' && quoted && i + 1 < line.size() && line[i + 1] == '"') field += c, ++i;
    else if (c == '"') quoted = !quoted;
    else if (c == ',' && !quoted) out.push_back(field), field.clear();
    else field += c;
  }
  out.push_back(field);
  return out;
}

std::vector<std::vector<std::string>> rows(const std::string& csv) {
  std::vector<std::vector<std::string>> out;
  std::istringstream in(csv);
  for (std::string line; std::getline(in, line);) out.push_back(split(line));
  return out;
}

std::string column(const std::vector<std::vector<std::string>>& table, std::size_t row, const std::string& name) {
  for (std::size_t c = 0; c < table[0].size(); ++c)
    if (table[0][c] == name) return table[row][c];
  FAIL("no column " << name);
  return "";
}

}  // namespace

TEST_CASE("run --csv: every row names the model, its size and the training") {
  auto r = run_luwusim("run " + kScenario + " --csv");
  REQUIRE(r.exit_code == 0);
  const auto t = rows(r.out);
  REQUIRE(t.size() == 3);
  CHECK(column(t, 1, "model") == "gpt3-1.3b");
  CHECK(column(t, 1, "micro_batch") == "8");
  CHECK(column(t, 1, "seq_len") == "2048");
  CHECK(column(t, 1, "dtype") == "fp16");
  CHECK(column(t, 1, "topology") == "luwu-star");
  CHECK(column(t, 2, "system") == "zero3");
  CHECK(std::stod(column(t, 1, "params")) > 1.3e9);
}

TEST_CASE("sweep CSV: each system's kind and settings, and its time against the first system's") {
  std::ofstream("cli-variants.json") << R"({"model": "gpt3-125m", "training": {"micro_batch": 1, "seq_len": 128},
    "cluster": {"topology": "luwu-star", "workers": 2},
    "systems": ["zero3", {"name": "zero3", "label": "fsdp-like", "param_fetch": "layer"}, "luwu"]})";
  auto r = run_luwusim("sweep cli-variants.json --set cluster.workers=2 -o cli-variants.jsonl --overwrite --csv cli-variants.csv");
  REQUIRE(r.exit_code == 0);
  std::ifstream f("cli-variants.csv");
  std::stringstream text;
  text << f.rdbuf();
  const auto t = rows(text.str());
  REQUIRE(t.size() == 4);
  CHECK(column(t, 1, "system") == "zero3");
  CHECK(column(t, 2, "system") == "fsdp-like");
  CHECK(column(t, 2, "system_kind") == "zero3");
  CHECK(column(t, 1, "system_settings") == "{}");
  CHECK(column(t, 2, "system_settings") == R"({"param_fetch":"layer"})");
  CHECK(column(t, 3, "system_kind") == "luwu");
  for (std::size_t i = 1; i <= 3; ++i) {
    CHECK(column(t, i, "first_system") == "zero3");
    const double expected = std::stod(column(t, i, "iteration_time_s")) / std::stod(column(t, 1, "iteration_time_s"));
    CHECK(std::stod(column(t, i, "first_system_speedup")) == doctest::Approx(expected).epsilon(1e-12));
  }
}

TEST_CASE("sweep progress: a finished point's process is taken by the next one, and counted running") {
  // Results in the temp folder, not wherever the test runs (a copy once landed at the repository's root).
  const std::string results =
      (std::filesystem::temp_directory_path() / ("cli-progress-" + std::to_string(::getpid()) + ".jsonl")).string();
  auto r = run_luwusim("sweep " + kScenario +
                       " --set model=gpt3-125m --set training.seq_len=128,256 --set cluster.workers=2,4 -o " + results +
                       " --overwrite --jobs 2");
  std::filesystem::remove(results);
  REQUIRE(r.exit_code == 0);
  // Not a terminal: one line per finished point.  Two of four done by then, two more still to run.
  CHECK(r.err.find("1/4 points, 0 failed, 2 running") != std::string::npos);
  CHECK(r.err.find("2/4 points, 0 failed, 2 running") != std::string::npos);
  CHECK(r.err.find("3/4 points, 0 failed, 1 running") != std::string::npos);
}
