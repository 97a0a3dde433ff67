// luwusim sweep / sweep-export, and plots/make_figures.py, end to end on tiny scenarios: exit
// codes, resume after a kill, shards, --jobs independence, CSV, figures.
#include <doctest/doctest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <fcntl.h>
#include <nlohmann/json.hpp>
#include <sys/file.h>
#include <unistd.h>

#include "tests/cli/run_command.hpp"

namespace fs = std::filesystem;

namespace {

// The repository, from this file's path (CMake compiles sources by absolute path).
const fs::path kRepo = LUWUSIM_SOURCE_DIR;  // the source tree this build is of

struct TempDir {
  fs::path path;
  explicit TempDir(const std::string& name)
      : path(fs::temp_directory_path() / ("sweep-cli-" + std::to_string(::getpid()) + "-" + name)) {
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  std::string operator/(const std::string& f) const { return (path / f).string(); }
};

// GPT-3 125M, micro-batch 1, sequence 256, on 2-4 luwu-star workers: seconds per point.
void write_tiny_scenario(const std::string& file) {
  std::ofstream(file) << R"({"name": "tiny", "model": "gpt3-125m",
    "training": {"micro_batch": 1, "seq_len": 256, "recompute": true},
    "cluster": {"topology": "luwu-star", "workers": 2, "network": "100Gb/s"},
    "systems": ["ddp", "zero3"]})";
}

// Whether Debian's Python can draw; the figure tests say they are skipped when not.
bool has_matplotlib() {
  if (std::system("/usr/bin/python3 -c 'import matplotlib' 2>/dev/null") == 0) return true;
  MESSAGE("skipped: /usr/bin/python3 has no matplotlib (Debian: python3-matplotlib)");
  return false;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t end; (end = text.find('\n', start)) != std::string::npos; start = end + 1)
    out.push_back(text.substr(start, end - start));
  return out;
}

std::vector<std::string> sorted_lines(const std::string& file) {
  auto v = lines_of(read_whole_file(file));
  std::sort(v.begin(), v.end());
  return v;
}

int csv_fields(const std::string& row) {
  int n = 1;
  bool quoted = false;
  for (char c : row) {
    if (c == '"') quoted = !quoted;
    else if (c == ',' && !quoted) ++n;
  }
  return n;
}

}  // namespace

TEST_CASE("sweep: an unknown key is exit 2 naming it and nothing is written") {
  TempDir dir("unknown");
  write_tiny_scenario(dir / "base.json");
  auto r = run_luwusim("sweep " + dir / "base.json" + " --set cluster.wrokers=2,4 -o " + dir / "out.jsonl");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("wrokers") != std::string::npos);
  CHECK(r.err.find("did you mean \"workers\"") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "out.jsonl"));

  auto top = run_luwusim("sweep " + dir / "base.json" + " --set trainig.micro_batch=1 -o " + dir / "out.jsonl");
  CHECK(top.exit_code == 2);
  CHECK(top.err.find("trainig") != std::string::npos);
}

TEST_CASE("sweep: malformed --set or --shard or values are exit 2") {
  TempDir dir("malformed");
  write_tiny_scenario(dir / "base.json");
  const std::string base = "sweep " + dir / "base.json" + " -o " + dir / "out.jsonl";
  CHECK(run_luwusim(base + " --set cluster.workers").exit_code == 2);
  CHECK(run_luwusim(base + " --set 'systems=[\"ddp\"'").exit_code == 2);
  CHECK(run_luwusim(base + " --shard 3/2").exit_code == 2);
  auto bad_value = run_luwusim(base + " --set training.micro_batch=0");
  CHECK(bad_value.exit_code == 2);
  CHECK(bad_value.err.find("$.training.micro_batch") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "out.jsonl"));
}

TEST_CASE("sweep: the same key in two --set options is exit 2 naming it") {
  TempDir dir("twice");
  write_tiny_scenario(dir / "base.json");
  auto r = run_luwusim("sweep " + dir / "base.json" +
                       " --set cluster.workers=2,3 --set systems=ddp --set cluster.workers=4 -o " + dir / "out.jsonl");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--set cluster.workers is given more than once") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "out.jsonl"));
  // --list too: the axis is not silently replaced.
  CHECK(run_luwusim("sweep " + dir / "base.json" + " --set cluster.workers=2 --set cluster.workers=3 --list").exit_code ==
        2);
  // A --set still replaces an axis of a sweep file once.
  std::ofstream(dir / "sweep.json") << R"({"base": "base.json", "axes": {"cluster.workers": [2, 3]}})";
  auto replaced = run_luwusim("sweep " + dir / "sweep.json" + " --set cluster.workers=4 --list");
  REQUIRE(replaced.exit_code == 0);
  REQUIRE(lines_of(replaced.out).size() == 1);
  CHECK(nlohmann::json::parse(lines_of(replaced.out)[0])["point"]["cluster.workers"] == 4);
}

TEST_CASE("sweep --list: the cartesian product in order with ids") {
  TempDir dir("list");
  write_tiny_scenario(dir / "base.json");
  auto r = run_luwusim("sweep " + dir / "base.json" + " --set cluster.workers=2,3 --set systems=ddp,zero3 --list");
  REQUIRE(r.exit_code == 0);
  auto lines = lines_of(r.out);
  REQUIRE(lines.size() == 4);
  const int workers[] = {2, 2, 3, 3};
  const char* systems[] = {"ddp", "zero3", "ddp", "zero3"};
  std::set<std::string> ids;
  for (int i = 0; i < 4; ++i) {
    auto j = nlohmann::json::parse(lines[i]);
    CHECK(j["index"] == i);
    CHECK(j["point"]["cluster.workers"] == workers[i]);
    CHECK(j["point"]["systems"] == systems[i]);
    ids.insert(j["id"].get<std::string>());
  }
  CHECK(ids.size() == 4);
  auto shard = run_luwusim("sweep " + dir / "base.json" + " --set cluster.workers=2,3 --set systems=ddp,zero3 --list --shard 1/2");
  REQUIRE(shard.exit_code == 0);
  REQUIRE(lines_of(shard.out).size() == 2);
  CHECK(lines_of(shard.out)[0] == lines[1]);
  CHECK(lines_of(shard.out)[1] == lines[3]);
}

TEST_CASE("sweep: the same lines with --jobs 1 and --jobs 2 - CSV export readable") {
  TempDir dir("jobs");
  write_tiny_scenario(dir / "base.json");
  const std::string sweep = "sweep " + dir / "base.json" + " --set cluster.workers=2,3,4";
  auto one = run_luwusim(sweep + " --jobs 1 -o " + dir / "one.jsonl");
  auto two = run_luwusim(sweep + " --jobs 2 -o " + dir / "two.jsonl" + " --csv " + dir / "two.csv");
  REQUIRE(one.exit_code == 0);
  REQUIRE(two.exit_code == 0);
  CHECK(one.err.find("3/3 points") != std::string::npos);  // the progress line
  auto a = sorted_lines(dir / "one.jsonl"), b = sorted_lines(dir / "two.jsonl");
  REQUIRE(a.size() == 3);
  CHECK(a == b);
  for (const auto& line : a) {
    auto j = nlohmann::json::parse(line);
    REQUIRE(j["results"].size() == 2);
    CHECK(j["results"][0]["system"] == "ddp");
    CHECK(j["results"][1]["system"] == "zero3");
    CHECK(j["scenario"]["workers"] == j["point"]["cluster.workers"]);
    CHECK(j["results"][0]["iteration_time_s"].get<double>() > 0);
  }

  // A fresh sweep refuses a results file that already holds results.
  auto again = run_luwusim(sweep + " -o " + dir / "one.jsonl");
  CHECK(again.exit_code == 2);
  CHECK(again.err.find("--resume") != std::string::npos);

  // CSV: header + one row per point and system, every row as wide as the header.
  auto rows = lines_of(read_whole_file(dir / "two.csv"));
  REQUIRE(rows.size() == 1 + 3 * 2);
  CHECK(rows[0].rfind("id,index,point.cluster.workers,name,model,", 0) == 0);
  for (const auto& row : rows) CHECK(csv_fields(row) == csv_fields(rows[0]));
  CHECK(rows[1].find(",ddp,ddp,{},ddp,1.0,true,") != std::string::npos);  // system, kind, settings, first system, ratio
  auto exported = run_luwusim("sweep-export " + dir / "one.jsonl");
  REQUIRE(exported.exit_code == 0);
  CHECK(exported.out == read_whole_file(dir / "two.csv"));
}

TEST_CASE("sweep --resume after a kill: partial line dropped and only missing points run") {
  TempDir dir("resume");
  write_tiny_scenario(dir / "base.json");
  const std::string sweep = "sweep " + dir / "base.json" + " --set cluster.workers=2,3,4 --set systems=ddp --jobs 2";
  REQUIRE(run_luwusim(sweep + " -o " + dir / "clean.jsonl").exit_code == 0);
  auto clean = lines_of(read_whole_file(dir / "clean.jsonl"));
  REQUIRE(clean.size() == 3);

  // A kill mid-write: the first line whole, half of the second.
  std::ofstream(dir / "killed.jsonl") << clean[0] << "\n" << clean[1].substr(0, clean[1].size() / 2);
  auto resumed = run_luwusim(sweep + " -o " + dir / "killed.jsonl --resume");
  REQUIRE(resumed.exit_code == 0);
  CHECK(resumed.err.find("dropped a partial last line") != std::string::npos);
  CHECK(resumed.err.find("1 points were already") != std::string::npos);
  CHECK(resumed.err.find("2 points simulated") != std::string::npos);
  CHECK(sorted_lines(dir / "killed.jsonl") == sorted_lines(dir / "clean.jsonl"));

  // Nothing left to do: resuming a finished sweep runs nothing and changes nothing.
  auto nothing = run_luwusim(sweep + " -o " + dir / "killed.jsonl --resume");
  CHECK(nothing.exit_code == 0);
  CHECK(nothing.err.find("0 points simulated") != std::string::npos);
  CHECK(sorted_lines(dir / "killed.jsonl") == sorted_lines(dir / "clean.jsonl"));
}

TEST_CASE("sweep: SIGTERM stops cleanly keeping whole lines and --resume finishes the sweep") {
  TempDir dir("signal");
  write_tiny_scenario(dir / "base.json");
  // 20 points of GPT-3 1.3B at sequence 2048, one at a time: long enough to be stopped midway.
  const std::string axes = " --set model=gpt3-1.3b --set training.seq_len=2048 --set cluster.workers=2,3,4,5,6,7,8,9,10,11 "
                           "--set systems=ddp,zero3";
  const std::string sweep = std::string(LUWUSIM_BINARY) + " sweep " + dir / "base.json" + axes;
  REQUIRE(std::system((sweep + " --jobs 2 -o " + dir / "clean.jsonl 2>/dev/null").c_str()) == 0);
  // Stop it once the first point is written.
  const std::string out = dir / "stopped.jsonl";
  const std::string script = "(" + sweep + " --jobs 1 -o " + out + " 2>/dev/null & pid=$!; " +
                             "while [ ! -s " + out + " ]; do sleep 0.02; done; kill -TERM $pid; wait $pid; echo $? > " +
                             dir / "rc" + ")";
  std::system(script.c_str());
  const int rc = std::stoi(read_whole_file(dir / "rc"));
  CHECK((rc == 143 || rc == 0));  // 128 + SIGTERM, or it had already finished
  const std::string kept = read_whole_file(out);
  REQUIRE_FALSE(kept.empty());
  CHECK(kept.back() == '\n');  // no partial line
  auto kept_lines = lines_of(kept);
  auto clean = sorted_lines(dir / "clean.jsonl");
  REQUIRE(clean.size() == 20);
  for (const auto& l : kept_lines) CHECK(std::find(clean.begin(), clean.end(), l) != clean.end());
  MESSAGE("SIGTERM after the first point: exit " << rc << ", " << kept_lines.size() << " of 20 points kept");
  auto resumed = run_luwusim("sweep " + dir / "base.json" + axes + " --jobs 2 --resume -o " + out);
  REQUIRE(resumed.exit_code == 0);
  CHECK(sorted_lines(out) == clean);
}

TEST_CASE("sweep: a results file another sweep holds is exit 2 naming it, nothing written") {
  TempDir dir("lock");
  write_tiny_scenario(dir / "base.json");
  const std::string out = dir / "out.jsonl";
  const std::string sweep = "sweep " + dir / "base.json" + " --set systems=ddp --jobs 1 -o " + out;
  const int fd = ::open(out.c_str(), O_WRONLY | O_CREAT, 0644);
  REQUIRE(fd >= 0);
  REQUIRE(::flock(fd, LOCK_EX | LOCK_NB) == 0);  // as a running sweep holds it
  for (const char* mode : {"", " --resume", " --overwrite"}) {
    auto r = run_luwusim(sweep + mode);
    CHECK(r.exit_code == 2);
    CHECK(r.err.find(out + ": another sweep holds it") != std::string::npos);
    CHECK(r.err.find("points simulated") == std::string::npos);
  }
  CHECK(read_whole_file(out).empty());
  ::close(fd);  // the first sweep ends
  auto after = run_luwusim(sweep);
  CHECK(after.exit_code == 0);
  CHECK(lines_of(read_whole_file(out)).size() == 1);
}

TEST_CASE("sweep-export takes a whole last line without its newline and refuses a cut-off one, and an unwritable -o is exit 2") {
  // Both used to go wrong silently or with another exit code (issue 36): the line was dropped with
  // exit 0, and a missing output folder was exit 1.
  TempDir dir("sweep-export-last-line");
  write_tiny_scenario(dir / "base.json");
  REQUIRE(run_luwusim("sweep " + dir / "base.json" + " --set cluster.workers=2,4 -o " + dir / "r.jsonl").exit_code == 0);
  std::string text = read_whole_file(dir / "r.jsonl");
  REQUIRE(text.back() == '\n');
  std::ofstream(dir / "no-newline.jsonl") << text.substr(0, text.size() - 1);
  auto whole = run_luwusim("sweep-export " + dir / "no-newline.jsonl" + " --csv " + dir / "out.csv");
  CHECK(whole.exit_code == 0);
  // The header and a row per system (ddp, zero3) of each point, as the whole file gives.
  CHECK(lines_of(read_whole_file(dir / "out.csv")).size() == 1 + 2 * 2);
  REQUIRE(run_luwusim("sweep-export " + dir / "r.jsonl" + " --csv " + dir / "full.csv").exit_code == 0);
  CHECK(read_whole_file(dir / "out.csv") == read_whole_file(dir / "full.csv"));
  std::ofstream(dir / "cut.jsonl") << text.substr(0, text.size() - 20);
  auto cut = run_luwusim("sweep-export " + dir / "cut.jsonl" + " --csv " + dir / "out2.csv");
  CHECK(cut.exit_code == 2);
  CHECK(cut.err.find("cut off") != std::string::npos);
  auto unwritable = run_luwusim("sweep " + dir / "base.json" + " -o " + dir / "no-such-folder/r.jsonl");
  CHECK(unwritable.exit_code == 2);
  CHECK(unwritable.err.find("no-such-folder") != std::string::npos);
}

TEST_CASE("sweep-export and --resume refuse results of another sweep unless --allow-mixed") {
  TempDir dir("mixed");
  write_tiny_scenario(dir / "base.json");
  const std::string sweep = "sweep " + dir / "base.json" + " --set systems=ddp --jobs 2";
  REQUIRE(run_luwusim(sweep + " --set cluster.workers=2,3 -o " + dir / "a.jsonl").exit_code == 0);
  REQUIRE(run_luwusim(sweep + " --set cluster.workers=2,4 -o " + dir / "b.jsonl").exit_code == 0);
  const std::string a_before = read_whole_file(dir / "a.jsonl");

  // Point 1 is 3 workers in a.jsonl and 4 in b.jsonl.
  auto refused = run_luwusim("sweep-export " + dir / "a.jsonl " + dir / "b.jsonl --jsonl " + dir / "all.jsonl");
  CHECK(refused.exit_code == 2);
  CHECK(refused.err.find("results of different sweeps") != std::string::npos);
  CHECK(refused.err.find(dir / "b.jsonl") != std::string::npos);
  CHECK_FALSE(fs::exists(dir / "all.jsonl"));
  auto allowed = run_luwusim("sweep-export --allow-mixed " + dir / "a.jsonl " + dir / "b.jsonl --jsonl " + dir / "all.jsonl");
  CHECK(allowed.exit_code == 0);
  CHECK(lines_of(read_whole_file(dir / "all.jsonl")).size() == 3);  // point 0 is the same in both

  // Resuming a.jsonl with other axes values: refused, the file untouched.
  auto resumed = run_luwusim(sweep + " --set cluster.workers=2,4 --resume -o " + dir / "a.jsonl");
  CHECK(resumed.exit_code == 2);
  CHECK(resumed.err.find(dir / "a.jsonl: 1 of its 2 results belong to a different sweep") != std::string::npos);
  CHECK(read_whole_file(dir / "a.jsonl") == a_before);
  auto kept = run_luwusim(sweep + " --set cluster.workers=2,4 --resume --allow-mixed -o " + dir / "a.jsonl");
  CHECK(kept.exit_code == 0);
  CHECK(kept.err.find("1 points simulated") != std::string::npos);
  CHECK(lines_of(read_whole_file(dir / "a.jsonl")).size() == 3);
}

TEST_CASE("sweep --shard: the union of the shards is the whole sweep") {
  TempDir dir("shard");
  write_tiny_scenario(dir / "base.json");
  const std::string sweep = "sweep " + dir / "base.json" + " --set cluster.workers=2,3,4 --set systems=ddp --jobs 1";
  REQUIRE(run_luwusim(sweep + " -o " + dir / "whole.jsonl").exit_code == 0);
  REQUIRE(run_luwusim(sweep + " --shard 0/2 -o " + dir / "s0.jsonl").exit_code == 0);
  REQUIRE(run_luwusim(sweep + " --shard 1/2 -o " + dir / "s1.jsonl").exit_code == 0);
  CHECK(lines_of(read_whole_file(dir / "s0.jsonl")).size() == 2);  // points 0 and 2
  CHECK(lines_of(read_whole_file(dir / "s1.jsonl")).size() == 1);  // point 1
  REQUIRE(run_luwusim("sweep-export " + dir / "s1.jsonl " + dir / "s0.jsonl --jsonl " + dir / "merged.jsonl").exit_code == 0);
  REQUIRE(run_luwusim("sweep-export " + dir / "whole.jsonl --jsonl " + dir / "whole-sorted.jsonl").exit_code == 0);
  CHECK(read_whole_file(dir / "merged.jsonl") == read_whole_file(dir / "whole-sorted.jsonl"));
  auto merged = lines_of(read_whole_file(dir / "merged.jsonl"));
  REQUIRE(merged.size() == 3);
  for (int i = 0; i < 3; ++i) CHECK(nlohmann::json::parse(merged[i])["index"] == i);
}

TEST_CASE("sweep: every system of a point gets its own entry in order") {
  TempDir dir("unsupported");
  write_tiny_scenario(dir / "base.json");
  // Systems run one by one: each has its own entry, a result or (no schedule yet) an error.
  auto r = run_luwusim("sweep " + dir / "base.json" +
                       " --set 'systems=[\"ddp\",\"luwu\",\"switchml\",\"zero-infinity\",\"zero-offload\"]' -o " +
                       dir / "out.jsonl");
  REQUIRE(r.exit_code == 0);
  auto line = nlohmann::json::parse(read_whole_file(dir / "out.jsonl"));
  REQUIRE(line["results"].size() == 5);
  CHECK(line["results"][0]["system"] == "ddp");
  CHECK(line["results"][0]["feasible"] == true);
  for (const auto& result : line["results"])
    CHECK((result.contains("error") || result.contains("feasible")));
}

TEST_CASE("figures: plots/make_figures.py draws every figure from small results") {
  if (!has_matplotlib()) return;
  TempDir dir("figures");
  fs::create_directories(dir / "results/timeline");
  write_tiny_scenario(dir / "base.json");
  const std::string base = "sweep " + dir / "base.json" + " --jobs 2 --set 'systems=[\"luwu\",\"zero3\",\"ddp\"]'";
  REQUIRE(run_luwusim(base + " --set model=gpt3-125m,gpt3-350m -o " + dir / "results/model-size.jsonl").exit_code == 0);
  REQUIRE(run_luwusim(base + " --set cluster.workers=2,4 -o " + dir / "results/scalability.jsonl").exit_code == 0);
  // 200 Gb/s needs a switch with 200 Gb/s ports.
  REQUIRE(run_luwusim(base + " --set cluster.profiles.switch=tofino2 --set cluster.network=100Gb/s,200Gb/s -o " +
                      dir / "results/network.jsonl")
              .exit_code == 0);
  REQUIRE(run_luwusim("run " + dir / "base.json" + " --system zero3 --json --timeline " + dir / "results/timeline/zero3.json")
              .exit_code == 0);
  // The paper's figures (plots/paper_figures.py) on tiny stand-ins for scenarios/paper: LuWu against
  // ZeRO-Infinity by worker count, and a micro-batch axis.  The sweeps without results
  // (paper-sensitivity, ablations, max-model-size, fat-tree-oversubscription) are drawn as panels
  // naming the missing sweep.
  const std::string paper = "sweep " + dir / "base.json" + " --jobs 2";
  REQUIRE(run_luwusim(paper + " --set 'systems=[\"luwu\",\"zero-infinity\"]' --set cluster.workers=2,4 -o " +
                      dir / "results/headline.jsonl")
              .exit_code == 0);
  REQUIRE(run_luwusim(paper + " --set 'systems=[\"luwu\",\"zero-infinity\",\"zero3\"]' --set training.micro_batch=1,2 -o " +
                      dir / "results/model-microbatch.jsonl")
              .exit_code == 0);
  // The figures drawn from single scenarios: SHARP vs LuWu; LuWu vs ZeRO-Offload on another cluster (two
  // results files, told apart by the scenario's name); the cost efficiency from the LuWu scenario alone
  // (the other two clusters' results missing: named under the figure), priced by a list of the tiny
  // cluster's parts.
  REQUIRE(run_luwusim(paper + R"( --set 'systems=["luwu",{"name":"zero-infinity","label":"zero-infinity-nvme","offload":"nvme"},)"
                              R"({"name":"zero-infinity","label":"zero-infinity-nvme-sharp","offload":"nvme","collective_algorithm":"in-network"}]' -o )" +
                      dir / "results/sharp-opt30b-4w.jsonl")
              .exit_code == 0);
  REQUIRE(run_luwusim(paper + R"( --set 'systems=["luwu","zero-offload"]' -o )" + dir / "results/luwu-opt13b-8w.jsonl")
              .exit_code == 0);
  REQUIRE(run_luwusim(paper + R"( --set name=tiny-one-server --set 'systems=["zero-offload",{"name":"zero-offload","label":"zero-offload-dpu","delayed_param_update":true}]' -o )" +
                      dir / "results/zero-offload-nvlink-opt13b.jsonl")
              .exit_code == 0);
  std::ofstream(dir / "prices.json") << R"({"name": "tiny", "prices": {
      "a100-40gb-sxm": {"usd": 8000, "source": "test"}, "dual-socket-server-2021": {"usd": 10000, "source": "test"},
      "alveo-u50": {"usd": 1600, "source": "test"}, "tofino": {"usd": 10000, "source": "test"},
      "samsung-pm1733": {"usd": 310, "source": "test"}}})";
  REQUIRE(run_luwusim(paper + " --set systems=luwu --set prices=" + dir / "prices.json -o " + dir / "results/cost-32gpu-luwu.jsonl")
              .exit_code == 0);
  // Parameter-server sizing on 1 and 2 dedicated machines, with the colocated servers, LuWu and ATP
  // beside them; the systems of multi-GPU servers on two small models.
  REQUIRE(run_luwusim(paper + R"( --set 'systems=[{"name":"parameter-server","label":"parameter-server-dedicated"},)"
                              R"({"name":"parameter-server","label":"parameter-server-colocated","ps_placement":"colocated"},"luwu","atp"]')"
                              " --set cluster.parameter_servers=1,2 -o " + dir / "results/parameter-server-sizing.jsonl")
              .exit_code == 0);
  REQUIRE(run_luwusim(paper + R"( --set 'cluster={"topology":"dgx","servers":2,"gpus_per_server":2}')"
                              R"( --set 'systems=["zero3",{"name":"zero-hierarchical","partition_size":2},"ddp"]')"
                              " --set model=gpt3-125m,gpt3-350m -o " + dir / "results/systems-dgx.jsonl")
              .exit_code == 0);
  REQUIRE(run_luwusim(paper + R"( --set 'cluster={"topology":"dgx","servers":1,"gpus_per_server":2,"cxl_per_server":1}')"
                              R"( --set 'systems=["zero-offload",{"name":"zero-offload","label":"zero-offload-cxl-interleave","state_placement":"interleave"},"deep-optimizer-states"]')"
                              " --set model=gpt3-125m,gpt3-350m -o " + dir / "results/systems-offload-dgx.jsonl")
              .exit_code == 0);
  // The scale-out figure: a pipeline of 2 stages at data parallelism 4 and 8, folded to 2 (its
  // ZeRO-Infinity sweep's results missing: named under the figure).
  REQUIRE(run_luwusim(paper + R"( --set 'parallelism={"pipeline":2}' --set training.grad_accum=2)"
                              R"( --set 'simulation={"fold_data_parallel":2}' --set 'systems=["luwu","zero-infinity"]')"
                              " --set cluster.workers=8,16 -o " + dir / "results/scale-out-luwu.jsonl")
              .exit_code == 0);
  const std::string cmd = "/usr/bin/python3 " + (kRepo / "plots/make_figures.py").string() + " --skip-runs --out " +
                          dir.path.string() + " > " + dir / "written.txt 2> " + dir / "errors.txt";
  const int rc = std::system(cmd.c_str());
  INFO(read_whole_file(dir / "errors.txt"));
  REQUIRE(rc == 0);
  const std::vector<std::string> figures = {
      "throughput_vs_model_size", "iteration_breakdown", "switchml_breakdown", "scalability", "network_100_vs_200",
      "headline_175b", "headline_175b_workers", "sensitivity", "mfu_vs_model_size", "throughput_vs_micro_batch",
      "paper_breakdowns", "sm_sharing_what_if", "ablations", "max_model_size", "oversubscription_knee", "packet_spraying", "streaming_diloco_wan",
      "all_reduce_bandwidth", "reliable_transport", "parameter_server_sizing",
      "sharp_vs_luwu", "nvlink_zero_offload", "cost_efficiency_32gpu", "systems_dgx", "systems_offload_dgx",
      "scale_out", "compute_communication_streams"};
  for (const std::string& figure : figures)
    for (const char* ext : {".png", ".pdf"}) {
      const fs::path file = dir.path / (figure + ext);
      CHECK_MESSAGE(fs::exists(file), file.string());
      if (fs::exists(file)) CHECK(fs::file_size(file) > 1000);
    }
  CHECK(lines_of(read_whole_file(dir / "written.txt")).size() == 2 * figures.size());

  // --report: one HTML file with every figure embedded.
  const std::string report = "/usr/bin/python3 " + (kRepo / "plots/make_figures.py").string() + " --skip-runs --report --out " +
                             dir.path.string() + " > " + dir / "written.txt 2> " + dir / "errors.txt";
  REQUIRE(std::system(report.c_str()) == 0);
  const std::string page = read_whole_file(dir / "report.html");
  CHECK(page.find("data:image/png;base64,") != std::string::npos);
  for (const std::string& figure : figures) CHECK_MESSAGE(page.find("id='" + figure + "'") != std::string::npos, figure);
}

// A system whose simulation raises fails its point (exit 1, counted failed), its siblings' results
// kept beside its error (docs/sweeps.md, "How points run"): DDP through host memory on a host whose
// profile gives no staged rate is refused when simulated.
TEST_CASE("sweep: a system whose simulation fails fails the point, its siblings' results kept") {
  TempDir dir("sweep-system-failed");
  write_tiny_scenario(dir / "base.json");
  auto r = run_luwusim("sweep " + dir / "base.json" +
                       R"( --set 'systems=["zero3",{"name":"ddp","gpu_direct_rdma":"off"}]' -o )" + dir / "out.jsonl");
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("1 failed") != std::string::npos);
  const auto line = nlohmann::json::parse(read_whole_file(dir / "out.jsonl"));
  REQUIRE(line["results"].size() == 2);
  CHECK(line["results"][0]["system"] == "zero3");
  CHECK(line["results"][0]["feasible"] == true);
  CHECK(line["results"][1]["error"].get<std::string>().find("nccl_host_staged_bandwidth") != std::string::npos);
}

// A system whose simulation failed is drawn and tabled as failed, with its reason, never as "does
// not fit" (issue 36): a tiny micro-batch sweep whose ZeRO-3 result at micro-batch 2 is replaced
// by the error line a failed simulation writes.
TEST_CASE("figures: a failed simulation is shown as failed with its reason, not as does not fit") {
  if (!has_matplotlib()) return;
  TempDir dir("figures-failed");
  fs::create_directories(dir / "results");
  write_tiny_scenario(dir / "base.json");
  REQUIRE(run_luwusim("sweep " + dir / "base.json" + " --jobs 2 --set 'systems=[\"luwu\",\"zero-infinity\",\"zero3\"]'" +
                      " --set model=opt-1.3b --set training.micro_batch=1,2 -o " + dir / "results/model-microbatch.jsonl")
              .exit_code == 0);
  const std::string inject =
      "/usr/bin/python3 -c \"import json,sys; p=sys.argv[1]; L=[json.loads(l) for l in open(p)]\n"
      "for d in L:\n"
      " if d['point'].get('training.micro_batch')==2:\n"
      "  d['results']=[r if r['system']!='zero3' else {'system':'zero3','error':'simulating zero3 failed: injected'} for r in d['results']]\n"
      "open(p,'w').write(''.join(json.dumps(d)+chr(10) for d in L))\" " + dir / "results/model-microbatch.jsonl";
  REQUIRE(std::system(inject.c_str()) == 0);
  const std::string cmd = "/usr/bin/python3 " + (kRepo / "plots/make_figures.py").string() + " --skip-runs --report --out " +
                          dir.path.string() + " > " + dir / "written.txt 2> " + dir / "errors.txt";
  INFO(read_whole_file(dir / "errors.txt"));
  REQUIRE(std::system(cmd.c_str()) == 0);
  const std::string page = read_whole_file(dir / "report.html");
  // The throughput table (figure throughput_vs_micro_batch, OPT-1.3B panel): ZeRO-3 at micro-batch 2.
  CHECK(page.find("<td>ZeRO-3</td><td>failed</td>") != std::string::npos);
  CHECK(page.find("<td>ZeRO-3</td><td>does not fit</td>") == std::string::npos);
}

// The shipped oversubscription sweep (docs/routing.md): its 12 points, and one of them run.  Under
// single-path routing every byte between the leaves crosses spine0: 8 rings (one per GPU of a
// server) cross each of the 4 leaf boundaries, each flow 2 (S-1)/S x 2P / 8 bytes for S = 16
// servers and P parameters, so spine0 carries 32 such flows and the other 31 spines none.
TEST_CASE("sweep: scenarios/sweeps/fat-tree-oversubscription.json, single-path at 1:1 loads spine0 alone") {
  const std::string file = (kRepo / "scenarios/sweeps/fat-tree-oversubscription.json").string();
  auto listed = run_luwusim("sweep " + file + " --list");
  REQUIRE(listed.exit_code == 0);
  CHECK(lines_of(listed.out).size() == 12);

  TempDir dir("oversubscription");
  auto r = run_luwusim("sweep " + file + " --shard 6/12 -j 1 -o " + (dir / "out.jsonl"));
  REQUIRE(r.exit_code == 0);
  auto line = nlohmann::json::parse(read_whole_file(dir / "out.jsonl"));
  CHECK(line["point"]["simulation.routing"] == "single-path");
  CHECK(line["point"]["cluster.oversubscription"] == 1);
  const double params = line["scenario"]["params"].get<double>();
  const double flow = 2.0 * 15 / 16 * 2 * params / 8;
  for (const auto& result : line["results"]) {
    CAPTURE(result["system"]);
    const auto& spines = result["spines"];
    CHECK(spines["count"] == 32);
    CHECK(spines["per_switch"]["switch"][0] == "spine0");
    CHECK(spines["per_switch"]["bytes"][0].get<double>() == doctest::Approx(32 * flow).epsilon(1e-12));
    CHECK(spines["bytes_min"].get<double>() == 0);
    CHECK(spines["imbalance"].get<double>() == doctest::Approx(32).epsilon(1e-12));
  }
}
