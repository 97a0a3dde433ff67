// Sweeps: --set parsing, the cartesian product and its ids, settings into the scenario JSON,
// validation naming the bad key, shards, and the results file (partial lines, merge, CSV).
#include <doctest/doctest.h>

#include <algorithm>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <unistd.h>

#include "sim/experiment/isolated_run.hpp"
#include "sim/experiment/sweep.hpp"
#include "sim/experiment/sweep_results.hpp"
#include "sim/experiment/sweep_runner.hpp"

using luwu::Json;
using namespace luwu::sim;

namespace {

// A small valid scenario (GPT-3 125M on 2 luwu-star workers).
Json small_scenario() {
  return Json::parse(R"({
    "name": "tiny", "model": "gpt3-125m",
    "training": {"micro_batch": 1, "seq_len": 256},
    "cluster": {"topology": "luwu-star", "workers": 2, "network": "100Gb/s"},
    "systems": ["ddp"]})");
}

SweepDefinition small_sweep() {
  SweepDefinition s;
  s.base = small_scenario();
  s.base_file = "tiny.json";
  s.origin = "test";
  return s;
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("sweep-test-" + std::to_string(::getpid()) + "-" + name)).string();
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// A syntactically complete result line for a point (what the runner appends).
std::string fake_result_line(const SweepPoint& p) {
  Json run = {{"scenario", {{"model", "gpt3-125m"}, {"workers", 2}}},
              {"results", Json::array({{{"system", "ddp"}, {"feasible", true}, {"iteration_time_s", 1.5}}})}};
  return sweep_result_line(p, run);
}

}  // namespace

TEST_CASE("FNV-1a 64 matches the published test vectors") {
  // Fowler/Noll/Vo test vectors: the empty string hashes to the offset basis; "a" and "foobar".
  CHECK(fnv1a_64("") == 0xcbf29ce484222325ull);
  CHECK(fnv1a_64("a") == 0xaf63dc4c8601ec8cull);
  CHECK(fnv1a_64("foobar") == 0x85944171f73967e8ull);
}

TEST_CASE("--set splits values at top-level commas and reads JSON where it parses") {
  auto a = parse_set_option("cluster.workers=4,8,16");
  CHECK(a.key == "cluster.workers");
  REQUIRE(a.values.size() == 3);
  CHECK(a.values[0] == Json(4));
  CHECK(a.values[2] == Json(16));

  auto b = parse_set_option("cluster.network=100Gb/s,200Gb/s");
  REQUIRE(b.values.size() == 2);
  CHECK(b.values[0] == Json("100Gb/s"));

  auto c = parse_set_option(R"(systems=["zero3","ddp"],["ddp"],zero3)");
  REQUIRE(c.values.size() == 3);
  CHECK(c.values[0] == Json::array({"zero3", "ddp"}));
  CHECK(c.values[1] == Json::array({"ddp"}));
  CHECK(c.values[2] == Json("zero3"));

  auto d = parse_set_option(R"(training.recompute=true,false)");
  CHECK(d.values[0] == Json(true));
  auto e = parse_set_option(R"(name="a,b",c)");
  REQUIRE(e.values.size() == 2);
  CHECK(e.values[0] == Json("a,b"));
}

TEST_CASE("--set rejects malformed options") {
  CHECK_THROWS_AS(parse_set_option("cluster.workers"), std::invalid_argument);
  CHECK_THROWS_AS(parse_set_option("=4"), std::invalid_argument);
  CHECK_THROWS_AS(parse_set_option("cluster.workers="), std::invalid_argument);
  CHECK_THROWS_AS(parse_set_option("cluster.workers=4,,8"), std::invalid_argument);
  CHECK_THROWS_AS(parse_set_option("cluster..workers=4"), std::invalid_argument);
  CHECK_THROWS_AS(parse_set_option("systems=[\"ddp\""), std::invalid_argument);
}

TEST_CASE("the cartesian product: first axis slowest - settings applied - stable distinct ids") {
  auto sweep = small_sweep();
  set_axis(sweep, parse_set_option("cluster.workers=2,4"));
  set_axis(sweep, parse_set_option("model=gpt3-125m,gpt3-350m,gpt3-760m"));
  auto points = expand_sweep(sweep);
  REQUIRE(points.size() == 6);
  const char* models[] = {"gpt3-125m", "gpt3-350m", "gpt3-760m"};
  std::set<std::string> ids;
  for (int i = 0; i < 6; ++i) {
    const auto& p = points[i];
    CHECK(p.index == i);
    const int workers = i < 3 ? 2 : 4;  // nested loops: workers outside, model inside
    CHECK(p.scenario["cluster"]["workers"] == workers);
    CHECK(p.scenario["model"] == models[i % 3]);
    CHECK(p.scenario["cluster"]["network"] == "100Gb/s");  // untouched base fields stay
    REQUIRE(p.settings.size() == 2);
    CHECK(p.settings[0].first == "cluster.workers");
    CHECK(p.settings[1].first == "model");
    // The id: index, dash, 16 hex digits of FNV-1a over the generated scenario's JSON text.
    char hash[17];
    std::snprintf(hash, sizeof hash, "%016llx", static_cast<unsigned long long>(fnv1a_64(p.scenario.dump())));
    CHECK(p.id == std::to_string(i) + "-" + hash);
    ids.insert(p.id);
  }
  CHECK(ids.size() == 6);
  CHECK(settings_json_text(points[4]) == R"({"cluster.workers":4,"model":"gpt3-350m"})");

  // Stable: the same sweep expands to the same ids; another base changes every id.
  auto again = expand_sweep(sweep);
  for (int i = 0; i < 6; ++i) CHECK(again[i].id == points[i].id);
  auto other = sweep;
  other.base["training"]["micro_batch"] = 2;
  auto moved = expand_sweep(other);
  for (int i = 0; i < 6; ++i) CHECK(moved[i].id != points[i].id);
}

TEST_CASE("a sweep without axes is its base scenario as one point") {
  auto points = expand_sweep(small_sweep());
  REQUIRE(points.size() == 1);
  CHECK(points[0].scenario == small_scenario());
  CHECK(describe_settings(points[0]) == "the base scenario");
}

TEST_CASE("each point describes itself: the base's description, then its own settings") {
  auto sweep = small_sweep();
  sweep.base["description"] = "GPT-3 125M on 2 workers";
  set_axis(sweep, parse_set_option("cluster.workers=2,4"));
  set_axis(sweep, parse_set_option("model=gpt3-125m,gpt3-350m"));
  const auto points = expand_sweep(sweep);
  REQUIRE(points.size() == 4);
  CHECK(points[3].scenario["description"] ==
        "GPT-3 125M on 2 workers [sweep point 3: cluster.workers=4, model=gpt3-350m]");
  // An axis of descriptions is the user's own.
  set_axis(sweep, parse_set_option("description=a,b"));
  CHECK(expand_sweep(sweep)[1].scenario["description"] == "b");
}

TEST_CASE("a --set replaces the axis with the same key") {
  auto sweep = small_sweep();
  set_axis(sweep, parse_set_option("cluster.workers=2,4"));
  set_axis(sweep, parse_set_option("cluster.workers=8"));
  REQUIRE(sweep.axes.size() == 1);
  CHECK(expand_sweep(sweep).size() == 1);
}

TEST_CASE("settings reach nested fields and array elements and a single system becomes a list") {
  Json s = small_scenario();
  apply_setting(s, "cluster.profiles.gpu", "a100-40gb-pcie", "t");
  CHECK(s["cluster"]["profiles"]["gpu"] == "a100-40gb-pcie");
  apply_setting(s, "systems", "zero3", "t");
  CHECK(s["systems"] == Json::array({"zero3"}));
  s["systems"] = Json::parse(R"([{"name": "zero3"}, "ddp"])");
  apply_setting(s, "systems.0.prefetch_layers", 2, "t");
  CHECK(s["systems"][0]["prefetch_layers"] == 2);
  CHECK_THROWS_AS(apply_setting(s, "systems.5.name", "ddp", "t"), luwu::InputError);
  CHECK_THROWS_AS(apply_setting(s, "training.micro_batch.size", 2, "t"), luwu::InputError);
}

TEST_CASE("validation names an unknown key and the point") {
  auto sweep = small_sweep();
  set_axis(sweep, parse_set_option("cluster.workerz=2,4"));
  auto points = expand_sweep(sweep);
  try {
    validate_sweep(sweep, points);
    FAIL("expected an InputError");
  } catch (const luwu::InputError& e) {
    const std::string what = e.what();
    CHECK(what.find("workerz") != std::string::npos);
    CHECK(what.find("sweep point 0") != std::string::npos);
    CHECK(what.find("did you mean \"workers\"") != std::string::npos);
  }
  auto bad_value = small_sweep();
  set_axis(bad_value, parse_set_option("training.micro_batch=1,0"));
  auto bad_points = expand_sweep(bad_value);
  try {
    validate_sweep(bad_value, bad_points);
    FAIL("expected an InputError");
  } catch (const luwu::InputError& e) {
    CHECK(std::string(e.what()).find("sweep point 1") != std::string::npos);
    CHECK(std::string(e.what()).find("$.training.micro_batch") != std::string::npos);
  }
  auto good = small_sweep();
  set_axis(good, parse_set_option("cluster.workers=2,3"));
  auto good_points = expand_sweep(good);
  CHECK_NOTHROW(validate_sweep(good, good_points));
}

TEST_CASE("sweep files: axes in file order - base path relative to the sweep file - strict keys") {
  const std::string dir = temp_path("files");
  std::filesystem::create_directories(dir + "/sub");
  write_text(dir + "/base.json", small_scenario().dump());
  write_text(dir + "/sub/sweep.json",
             R"({"base": "../base.json", "axes": {"model": ["gpt3-125m"], "cluster.workers": [2, 3]}})");
  auto sweep = load_sweep_definition(dir + "/sub/sweep.json");
  REQUIRE(sweep.axes.size() == 2);
  CHECK(sweep.axes[0].key == "model");  // not sorted: "cluster.workers" < "model"
  CHECK(sweep.axes[1].key == "cluster.workers");
  CHECK(std::filesystem::equivalent(sweep.base_file, dir + "/base.json"));
  CHECK(sweep.base == small_scenario());
  auto points = expand_sweep(sweep);
  REQUIRE(points.size() == 2);
  CHECK(points[1].scenario["cluster"]["workers"] == 3);

  auto plain = load_sweep_definition(dir + "/base.json");
  CHECK(plain.axes.empty());
  CHECK(plain.base == small_scenario());

  write_text(dir + "/bad.json", R"({"base": "base.json", "axis": {}})");
  CHECK_THROWS_AS(load_sweep_definition(dir + "/bad.json"), luwu::InputError);
  write_text(dir + "/empty-axis.json", R"({"base": "base.json", "axes": {"model": []}})");
  CHECK_THROWS_AS(load_sweep_definition(dir + "/empty-axis.json"), luwu::InputError);
  // A base that is not there: at the sweep file's $.base, not the bare path.
  write_text(dir + "/no-base.json", R"({"base": "missing.json", "axes": {"model": ["gpt3-125m"]}})");
  try {
    load_sweep_definition(dir + "/no-base.json");
    FAIL("expected an InputError");
  } catch (const luwu::InputError& e) {
    CHECK(e.json_path() == "$.base");
    CHECK(std::string(e.file()).find("no-base.json") != std::string::npos);
  }
  std::filesystem::remove_all(dir);
}

TEST_CASE("shards: i/n parses and the n shards cover every point exactly once") {
  CHECK_THROWS_AS(parse_shard("2/2"), std::invalid_argument);
  CHECK_THROWS_AS(parse_shard("1"), std::invalid_argument);
  CHECK_THROWS_AS(parse_shard("-1/2"), std::invalid_argument);
  CHECK_THROWS_AS(parse_shard("0/0"), std::invalid_argument);
  for (int n = 1; n <= 4; ++n)
    for (int point = 0; point < 11; ++point) {
      int owners = 0;
      for (int i = 0; i < n; ++i) owners += parse_shard(std::to_string(i) + "/" + std::to_string(n)).contains(point);
      CHECK(owners == 1);
    }
}

TEST_CASE("the results file: appended lines read back and a partial last line is dropped on resume") {
  auto sweep = small_sweep();
  set_axis(sweep, parse_set_option("cluster.workers=2,3,4"));
  auto points = expand_sweep(sweep);
  const std::string path = temp_path("results.jsonl");
  std::remove(path.c_str());
  {
    SweepResultsFile f(path, OpenResults::Fresh);
    f.append(fake_result_line(points[2]));
    f.append(sweep_error_line(points[0], "boom"));
  }
  auto lines = read_sweep_lines(path);
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].index == 2);
  CHECK(lines[0].id == points[2].id);
  CHECK(lines[0].json["point"]["cluster.workers"] == 4);
  CHECK(lines[0].json["input"] == points[2].scenario);
  CHECK(lines[1].json["error"] == "boom");

  // Fresh refuses a file with results; a partial line (a kill mid-write) is dropped on resume.
  CHECK_THROWS_AS(SweepResultsFile(path, OpenResults::Fresh), std::invalid_argument);
  const std::string whole = read_text(path);
  const std::string partial = fake_result_line(points[1]).substr(0, 40);
  write_text(path, whole + partial);
  std::size_t partial_bytes = 0;
  CHECK(read_sweep_lines(path, &partial_bytes).size() == 2);
  CHECK(partial_bytes == partial.size());
  std::string warned;
  {
    SweepResultsFile f(path, OpenResults::Resume, [&](const std::string& w) { warned = w; });
    CHECK(f.existing_ids() == std::set<std::string>{points[0].id, points[2].id});
    CHECK(read_text(path) == whole);
    f.append(fake_result_line(points[1]));
  }
  CHECK(warned.find("partial") != std::string::npos);
  CHECK(read_sweep_lines(path).size() == 3);

  // A broken line in the middle is an error naming its line.
  write_text(path, whole + "{not json}\n" + fake_result_line(points[1]) + "\n");
  try {
    read_sweep_lines(path);
    FAIL("expected an InputError");
  } catch (const luwu::InputError& e) {
    CHECK(e.json_path() == "line 3");
  }
  {
    SweepResultsFile f(path, OpenResults::Overwrite);
    CHECK(f.existing().empty());
  }
  CHECK(read_text(path).empty());
  std::remove(path.c_str());
}

TEST_CASE("merging results: one line per id sorted by index - CSV rows as wide as the header") {
  auto sweep = small_sweep();
  set_axis(sweep, parse_set_option("cluster.workers=2,3,4"));
  auto points = expand_sweep(sweep);
  const std::string a = temp_path("a.jsonl"), b = temp_path("b.jsonl");
  write_text(a, fake_result_line(points[2]) + "\n" + fake_result_line(points[0]) + "\n");
  write_text(b, fake_result_line(points[0]) + "\n" + sweep_error_line(points[1], "it, \"failed\"") + "\n");
  auto merged = merge_sweep_results({a, b});
  REQUIRE(merged.size() == 3);
  for (int i = 0; i < 3; ++i) CHECK(merged[i].index == i);
  CHECK(sweep_lines_to_jsonl(merged) ==
        fake_result_line(points[0]) + "\n" + sweep_error_line(points[1], "it, \"failed\"") + "\n" +
            fake_result_line(points[2]) + "\n");

  const std::string csv = sweep_results_to_csv(merged);
  // Count fields with RFC 4180 quoting: commas inside quotes do not separate.
  auto fields = [](const std::string& row) {
    int n = 1;
    bool quoted = false;
    for (char c : row) {
      if (c == '"') quoted = !quoted;
      else if (c == ',' && !quoted) ++n;
    }
    return n;
  };
  std::vector<std::string> rows;
  std::size_t start = 0;
  for (std::size_t end; (end = csv.find('\n', start)) != std::string::npos; start = end + 1)
    rows.push_back(csv.substr(start, end - start));
  REQUIRE(rows.size() == 4);  // header + one system at points 0 and 2 + the failed point 1
  CHECK(rows[0].rfind("id,index,point.cluster.workers,", 0) == 0);
  for (const auto& r : rows) CHECK(fields(r) == fields(rows[0]));
  CHECK(rows[2].find("\"it, \"\"failed\"\"\"") != std::string::npos);
  // system, its kind and settings (a bare name: none), the first system and this one's time over it, feasible
  CHECK(rows[1].find(",ddp,ddp,{},ddp,1.0,true,,1.5,") != std::string::npos);
  CHECK_THROWS_AS(merge_sweep_results({a, temp_path("missing.jsonl")}), luwu::InputError);
  std::remove(a.c_str());
  std::remove(b.c_str());
}

TEST_CASE("a point one of whose simulations crashes counts as failed, with its other systems' results") {
  SweepDefinition sweep = small_sweep();
  sweep.base["systems"] = Json::array({"ddp", "zero3"});
  set_axis(sweep, parse_set_option("training.micro_batch=1,2"));
  const auto points = expand_sweep(sweep);
  REQUIRE(points.size() == 2);
  SweepRunOptions options;
  options.output = temp_path("crash.jsonl");
  std::remove(options.output.c_str());
  options.jobs = 1;
  // zero3 at micro-batch 2: its simulation process dies of SIGSEGV, as a crashing engine would.
  options.run_system = [](const Scenario& one) -> ScenarioRun {
    if (one.systems.at(0)->label() == "zero3" && one.training.micro_batch == 2) {
      throw_unless_ok(run_isolated([]() -> std::string {
                        std::signal(SIGSEGV, SIG_DFL);  // doctest's handler would report it
                        std::raise(SIGSEGV);
                        return "not reached";
                      }),
                      "simulating zero3");
    }
    return run_scenario(one, RunOptions{});
  };
  const SweepRunSummary summary = run_sweep(sweep, points, options);
  CHECK(summary.ran == 2);
  CHECK(summary.failed == 1);

  std::map<int, Json> by_index;
  for (const auto& l : read_sweep_lines(options.output)) by_index[l.index] = l.json;
  REQUIRE(by_index.size() == 2);
  CHECK_FALSE(by_index[0].contains("error"));
  CHECK(by_index[0]["results"][1]["feasible"] == true);
  const Json& crashed = by_index[1];
  REQUIRE(crashed.contains("error"));
  CHECK(crashed["error"].get<std::string>().find("SIGSEGV") != std::string::npos);
  REQUIRE(crashed["results"].size() == 2);
  CHECK(crashed["results"][0]["system"] == "ddp");
  CHECK(crashed["results"][0]["feasible"] == true);  // the system that ran keeps its result
  CHECK(crashed["results"][1]["system"] == "zero3");
  CHECK(crashed["results"][1]["error"].get<std::string>().find("killed by signal") != std::string::npos);

  // The CSV has both systems' rows of the failed point; the crashed one carries the error.
  const std::string csv = sweep_results_to_csv(read_sweep_lines(options.output));
  int zero3_rows_with_signal = 0;
  for (std::size_t start = 0, end; (end = csv.find('\n', start)) != std::string::npos; start = end + 1) {
    const std::string row = csv.substr(start, end - start);
    if (row.find(",zero3,") != std::string::npos && row.find("SIGSEGV") != std::string::npos) ++zero3_rows_with_signal;
  }
  CHECK(zero3_rows_with_signal == 1);
  std::remove(options.output.c_str());
}

TEST_CASE("merging results of different sweeps is refused naming the files unless allow_mixed") {
  auto sweep = small_sweep();
  set_axis(sweep, parse_set_option("cluster.workers=2,3,4"));
  const auto points = expand_sweep(sweep);
  const std::string a = temp_path("mix-a.jsonl"), b = temp_path("mix-b.jsonl"), other = temp_path("mix-other.jsonl");
  write_text(a, fake_result_line(points[0]) + "\n" + fake_result_line(points[2]) + "\n");
  write_text(b, fake_result_line(points[1]) + "\n");
  CHECK(merge_sweep_results({a, b}).size() == 3);  // shards of one sweep

  auto refused = [&](const std::vector<std::string>& files, const std::string& expected) {
    try {
      merge_sweep_results(files);
      FAIL("expected results of different sweeps to be refused");
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      CHECK_MESSAGE(what.find(expected) != std::string::npos, what);
      CHECK_MESSAGE(what.find(files.back()) != std::string::npos, what);
      CHECK(what.find("--allow-mixed") != std::string::npos);
    }
  };

  // Same axis, other values: index 0 is another point.
  auto changed = small_sweep();
  set_axis(changed, parse_set_option("cluster.workers=8,3,4"));
  write_text(other, fake_result_line(expand_sweep(changed)[0]) + "\n");
  refused({a, other}, "point 0 is " + points[0].id + " in " + a);

  // Another base scenario, at an index the first file does not have.
  auto rebased = small_sweep();
  rebased.base["training"]["micro_batch"] = 2;
  set_axis(rebased, parse_set_option("cluster.workers=2,3,4"));
  write_text(other, fake_result_line(expand_sweep(rebased)[1]) + "\n");
  refused({a, other}, "different base scenarios");
  CHECK(merge_sweep_results({a, other}, true).size() == 3);

  // Other axes.
  auto reaxed = small_sweep();
  set_axis(reaxed, parse_set_option("training.micro_batch=1,2"));
  write_text(other, fake_result_line(expand_sweep(reaxed)[1]) + "\n");
  refused({a, other}, "axes [training.micro_batch]");
  const auto mixed = merge_sweep_results({a, other}, true);
  REQUIRE(mixed.size() == 3);
  CHECK(mixed[1].json["point"]["training.micro_batch"] == 2);
  for (const auto& f : {a, b, other}) std::remove(f.c_str());
}

TEST_CASE("a sweep's size is bounded before it expands: points, and the memory its scenarios take") {
  // At the old 1e7-point cap a sweep ended in std::bad_alloc while expanding (every point holds
  // its own scenario).
  auto refusal = [](const SweepDefinition& s) {
    try {
      expand_sweep(s);
    } catch (const luwu::InputError& e) {
      return std::string(e.what());
    }
    return std::string();
  };
  SweepDefinition many;
  many.origin = "many.json";
  many.base = Json{{"model", "gpt3-125m"}};
  for (const char* key : {"a", "b"}) {
    SweepAxis axis{key, {}};
    for (int v = 0; v < 1001; ++v) axis.values.push_back(v);  // 1001 x 1001 > 1e6
    many.axes.push_back(axis);
  }
  CHECK(refusal(many).find("more than 1000000 points") != std::string::npos);
  CHECK(refusal(many).find("many.json") != std::string::npos);

  // 20,000 points are allowed, but not of a 100 KB scenario: 8 x 100 KB x 20,000 = 16 GB.
  SweepDefinition big;
  big.origin = "big.json";
  big.base = Json{{"model", "gpt3-125m"}, {"description", std::string(100'000, 'x')}};
  SweepAxis axis{"training.micro_batch", {}};
  for (int v = 1; v <= 20'000; ++v) axis.values.push_back(v);
  big.axes.push_back(axis);
  const std::string why = refusal(big);
  CHECK(why.find("20000 points of a 100 KB scenario") != std::string::npos);
  CHECK(why.find("at most 4 GB") != std::string::npos);
  // The same points of a small scenario expand.
  big.base = Json{{"model", "gpt3-125m"}};
  CHECK(expand_sweep(big).size() == 20'000);
}
