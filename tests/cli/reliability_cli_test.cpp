// Reliability of the CLI at its limits: same scenario, same bytes; extreme but valid inputs end in a
// result or a clear error (exit 2, file and JSON path), never a crash or a hang.  Every command
// runs under `timeout 60` (exit 124 when it does not finish).
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "tests/cli/run_command.hpp"

namespace {

using nlohmann::json;

constexpr int kTimedOut = 124;  // timeout(1)'s exit code

CommandResult run_bounded(const std::string& args) { return run_luwusim(args, "timeout 60"); }

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

const std::string kSourceDir = LUWUSIM_SOURCE_DIR;

// A GPT-style model small enough to simulate in a blink: 2 blocks, h = 64.
const char* kTinyModel = R"({"name": "tiny", "layers": 2, "hidden": 64, "heads": 4, "vocab": 128, "max_seq": 32})";
// Its parameters by hand: 2 blocks of 12h^2 + 13h, embeddings (128 + 32) h, final LayerNorm 2h.
constexpr double kTinyParams = 2 * (12 * 64 * 64 + 13 * 64) + (128 + 32) * 64 + 2 * 64;

}  // namespace

TEST_CASE("reliability: a scenario run twice prints byte-identical JSON") {
  const std::string scenario = kSourceDir + "/scenarios/small-zero3-vs-ddp.json";
  auto first = run_bounded("run " + scenario + " --json");
  auto second = run_bounded("run " + scenario + " --json");
  REQUIRE(first.exit_code == 0);
  REQUIRE(second.exit_code == 0);
  CHECK(json::parse(first.out)["results"].size() == 2);
  CHECK(first.out == second.out);
}

TEST_CASE("reliability: memory for a million ZeRO-3 workers shards GPT-3 175B exactly") {
  auto r = run_bounded("memory --model gpt3-175b --workers 1000000 --gpu-mem 40GB --system zero3 --json");
  REQUIRE(r.exit_code == 0);
  json f = json::parse(r.out);
  // GPT-3 175B by hand: 96 (12h^2 + 13h) + (50257 + 2048) h + 2h, h = 12288, exactly.
  const unsigned long long h = 12288;
  const unsigned long long params = 96 * (12 * h * h + 13 * h) + (50257 + 2048) * h + 2 * h;
  CHECK(f["params"].get<unsigned long long>() == params);
  // ZeRO-3 pads its flat partition: ceil(P / N) parameters per worker, 2 bytes each at fp16.
  const unsigned long long shard = (params + 999999) / 1000000;
  CHECK(f["gpu_params_bytes"].get<unsigned long long>() == 2 * shard);
  CHECK(f["workers"].get<long long>() == 1000000);
}

TEST_CASE("reliability: a 100T-parameter inline model is counted exactly and does not fit, with the reason") {
  // 1000 blocks of h = 100000: 1000 (12h^2 + 13h) + (50000 + 2048) h + 2h = 1.2e14 + ... parameters.
  write_text("rel-cli-100t.json", R"({"name": "giant-100t", "layers": 1000, "hidden": 100000, "heads": 100,
                                      "vocab": 50000, "max_seq": 2048})");
  std::remove("rel-cli-100t.trace.json");
  auto gen = run_bounded("trace gen --model rel-cli-100t.json --micro-batch 1 --seq 2048 -o rel-cli-100t.trace.json");
  REQUIRE(gen.exit_code == 0);
  auto show = run_bounded("trace show rel-cli-100t.trace.json --json");
  REQUIRE(show.exit_code == 0);
  const unsigned long long h = 100000;
  const unsigned long long params = 1000 * (12 * h * h + 13 * h) + (50000 + 2048) * h + 2 * h;
  CHECK(json::parse(show.out)["params"].get<unsigned long long>() == params);

  auto mem = run_bounded("memory --model rel-cli-100t.json --workers 1024 --gpu-mem 80GB --system zero3 --json");
  REQUIRE(mem.exit_code == 0);
  json f = json::parse(mem.out);
  CHECK(f["params"].get<unsigned long long>() == params);
  CHECK(f["fits"] == false);
  CHECK(contains(f["reason"].get<std::string>(), "does not fit"));
  std::remove("rel-cli-100t.json");
  std::remove("rel-cli-100t.trace.json");
}

TEST_CASE("reliability: a model too large to count in uint64 is a clear error, not a wrapped number") {
  // (2^31 - 1)-wide everything: about 7e37 parameters, far past 2^64.
  write_text("rel-cli-huge.json", R"({"layers": 1000, "hidden": 2147483647, "heads": 1, "vocab": 2147483647,
                                      "max_seq": 2147483647, "ffn_hidden": 2147483647})");
  auto r = run_bounded("memory --model rel-cli-huge.json --workers 8 --gpu-mem 80GB --system ddp");
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "rel-cli-huge.json"));
  CHECK(contains(r.err, "too large"));
  std::remove("rel-cli-huge.json");
}

TEST_CASE("reliability: a luwu-star scenario with a million workers is a clear error at the cluster") {
  write_text("rel-cli-million.json", std::string(R"({"model": )") + kTinyModel + R"(,
      "training": {"micro_batch": 1, "seq_len": 16},
      "cluster": {"topology": "luwu-star", "workers": 1000000}, "systems": ["ddp"]})");
  auto r = run_bounded("run rel-cli-million.json");
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "rel-cli-million.json"));
  CHECK(contains(r.err, "$.cluster"));
  std::remove("rel-cli-million.json");
}

// 65536 GPUs pass the scenario loader (below the builders' cap); SimGrid could not create that many
// actors ("exceeding the amount of mappings allowed per process") and aborted the simulation
// process, so the simulator refuses them up front.
TEST_CASE("reliability: a fat-tree scenario with 65536 GPUs is a clear error, not an aborted simulation") {
  write_text("rel-cli-65k.json", std::string(R"({"model": )") + kTinyModel + R"(,
      "training": {"micro_batch": 1, "seq_len": 16},
      "cluster": {"topology": "fat-tree", "servers": 8192, "gpus_per_server": 8, "tiers": 3}, "systems": ["ddp"]})");
  auto r = run_bounded("run rel-cli-65k.json");
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "65536 GPUs"));
  CHECK(!contains(r.err, "signal"));
  std::remove("rel-cli-65k.json");
}

TEST_CASE("reliability: a 1 kb/s network is a slow simulation that finishes, not a hang") {
  write_text("rel-cli-slow.json", std::string(R"({"model": )") + kTinyModel + R"(,
      "training": {"micro_batch": 1, "seq_len": 16},
      "cluster": {"topology": "luwu-star", "workers": 2, "network": "1kb/s"}, "systems": ["ddp", "zero3"]})");
  auto r = run_bounded("run rel-cli-slow.json --json");
  REQUIRE(r.exit_code == 0);
  json results = json::parse(r.out)["results"];
  REQUIRE(results.size() == 2);
  // DDP's ring all-reduce of fp16 gradients over 2 workers sends 2 (N-1)/N x 2P = 2P bytes per GPU
  // through its 1 kb/s = 125 B/s NIC: the iteration cannot be shorter than that.
  const double ddp_floor_s = 2 * kTinyParams / 125.0;
  for (const auto& res : results) {
    CHECK(res["feasible"] == true);
    CHECK(std::isfinite(res["iteration_time_s"].get<double>()));
    if (res["system"] == "ddp") CHECK(res["iteration_time_s"].get<double>() >= ddp_floor_s);
  }
  std::remove("rel-cli-slow.json");
}

TEST_CASE("reliability: ZeRO-Infinity with NVMe smaller than the model state says why it does not run") {
  // A 1 GB SSD: GPT-3 1.3B's 16 B per parameter of state (21 GB) over 2 workers is 10.5 GB per
  // worker's NVMe, ten times what it holds.
  write_text("rel-cli-tiny-ssd.json", R"({"name": "tiny-ssd", "kind": "ssd", "description": "a 1 GB SSD",
      "fields": {"read_bandwidth": {"value": 7.0, "unit": "GB/s", "source": "as samsung-pm1733"},
                 "write_bandwidth": {"value": 3.8, "unit": "GB/s", "source": "as samsung-pm1733"},
                 "capacity": {"value": 1, "unit": "GB", "source": "the test's point: too small"},
                 "latency": {"value": 90, "unit": "us", "source": "as samsung-pm1733"}}})");
  write_text("rel-cli-small-ssd.json", R"({"model": "gpt3-1.3b", "training": {"micro_batch": 1, "seq_len": 512},
      "cluster": {"topology": "luwu-star", "workers": 2, "nvme_per_worker": 1,
                  "profiles": {"ssd": "rel-cli-tiny-ssd.json"}},
      "systems": [{"name": "zero-infinity", "offload": "nvme"}]})");
  auto r = run_bounded("run rel-cli-small-ssd.json --json");
  REQUIRE(r.exit_code == 0);
  json result = json::parse(r.out)["results"][0];
  CHECK(result["feasible"] == false);
  const std::string reason = result["reason"].get<std::string>();
  CHECK((contains(reason, "SSD") || contains(reason, "NVMe")));
  std::remove("rel-cli-tiny-ssd.json");
  std::remove("rel-cli-small-ssd.json");
}

namespace {
const char* const kSmallScenario = R"({"model": "gpt3-125m", "training": {"micro_batch": 1, "seq_len": 256},
  "cluster": {"topology": "luwu-star", "workers": 2},
  "systems": [{"name": "zero3", "label": "zero3, \"quoted\""}, {"name": "ddp", "label": "ddp\nnewline"},
              {"name": "switchml", "bucket_bytes": 1e6}]})";
}  // namespace

TEST_CASE("reliability: results that cannot be written are a failure, not exit 0") {
  write_text("rel-out.json", kSmallScenario);
  // Standard output on a full device.
  const std::string cmd = std::string(LUWUSIM_BINARY) + " run rel-out.json --json >/dev/full 2>rel-out.err";
  const int status = std::system(cmd.c_str());
  CHECK(WIFEXITED(status));
  CHECK(WEXITSTATUS(status) == 1);
  CHECK(contains(read_whole_file("rel-out.err"), "standard output"));
  // A timeline onto a device is written in place (the write fails here), and the device stays.
  auto full = run_luwusim("run rel-out.json --timeline /dev/full");
  CHECK(full.exit_code == 1);
  CHECK(contains(full.err, "/dev/full"));
  struct stat st {};
  REQUIRE(::stat("/dev/full", &st) == 0);
  CHECK(S_ISCHR(st.st_mode));
  // A directory, or a folder that does not exist, is a bad output path: exit 2, named.
  auto dir = run_luwusim("run rel-out.json --timeline .");
  CHECK(dir.exit_code == 2);
  auto missing = run_luwusim("run rel-out.json --timeline rel-no-such-dir/t.json");
  CHECK(missing.exit_code == 2);
  CHECK(contains(missing.err, "rel-no-such-dir/t.json"));
  std::remove("rel-out.json");
  std::remove("rel-out.err");
}

TEST_CASE("reliability: a timeline written to a symbolic link replaces the link's target, not the link") {
  write_text("rel-link.json", kSmallScenario);
  write_text("rel-link-target.json", "old");
  std::remove("rel-link-timeline.json");
  REQUIRE(::symlink("rel-link-target.json", "rel-link-timeline.json") == 0);
  auto r = run_luwusim("run rel-link.json --timeline rel-link-timeline.json");
  CHECK(r.exit_code == 0);
  struct stat st {};
  REQUIRE(::lstat("rel-link-timeline.json", &st) == 0);
  CHECK(S_ISLNK(st.st_mode));
  CHECK(json::parse(read_whole_file("rel-link-target.json")).contains("traceEvents"));
  for (const char* f : {"rel-link.json", "rel-link-target.json", "rel-link-timeline.json"}) std::remove(f);
}

TEST_CASE("reliability: run --csv quotes labels with commas, quotes and newlines (RFC 4180), one row per system") {
  write_text("rel-csv.json", kSmallScenario);
  auto r = run_luwusim("run rel-csv.json --csv");
  REQUIRE(r.exit_code == 0);
  CHECK(contains(r.out, "\"zero3, \"\"quoted\"\"\""));
  CHECK(contains(r.out, "\"ddp\nnewline\""));
  // Read back by the rules: 3 records after the header, each with the header's 29 fields.
  std::vector<std::vector<std::string>> records(1);
  std::string field;
  bool quoted = false;
  for (std::size_t i = 0; i < r.out.size(); ++i) {
    const char c = r.out[i];
    if (quoted) {
      if (c == '"' && i + 1 < r.out.size() && r.out[i + 1] == '"') field += '"', ++i;
      else if (c == '"') quoted = false;
      else field += c;
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      records.back().push_back(field), field.clear();
    } else if (c == '\n') {
      records.back().push_back(field), field.clear();
      records.emplace_back();
    } else {
      field += c;
    }
  }
  records.pop_back();  // after the last newline
  REQUIRE(records.size() == 4);
  // scenario, 10 model and training columns, topology and network, then 19 of the system and its
  // result, 8 spine_* columns (blank for a star), 2 cost columns.
  for (const auto& rec : records) CHECK(rec.size() == 1 + 10 + 2 + 19 + 8 + 2);
  REQUIRE(records[0][13] == "system");
  CHECK(records[1][13] == "zero3, \"quoted\"");
  CHECK(records[2][13] == "ddp\nnewline");
  std::remove("rel-csv.json");
  // The table says why a system does not run once, not "does not run: does not fit:".
  write_text("rel-table.json", R"({"model": "gpt3-175b", "training": {"micro_batch": 1, "seq_len": 256},
    "cluster": {"topology": "luwu-star", "workers": 2}, "systems": ["ddp"]})");
  auto table = run_luwusim("run rel-table.json");
  CHECK(table.exit_code == 0);
  CHECK(contains(table.out, "does not fit: ddp needs"));
  CHECK_FALSE(contains(table.out, "does not run: does not"));
  std::remove("rel-table.json");
}

TEST_CASE("reliability: inputs that are not regular JSON files are refused at once, naming them (exit 2)") {
  // A device read until memory ran out (/dev/zero) or forever (/dev/urandom); a directory read as
  // "unexpected end of input".
  for (const char* input : {"/dev/zero", "/dev/urandom", "."}) {
    CAPTURE(input);
    auto r = run_bounded(std::string("run ") + input);
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, input));
  }
}

TEST_CASE("reliability: suspicious scenario values are errors at their JSON path") {
  auto run_with = [](const std::string& cluster, const std::string& systems, const std::string& training) {
    write_text("rel-values.json", R"({"model": "gpt3-125m", "training": )" + training + R"(, "cluster": )" + cluster +
                                      R"(, "systems": )" + systems + "}");
    auto r = run_bounded("run rel-values.json");
    std::remove("rel-values.json");
    return r;
  };
  const std::string star = R"({"topology": "luwu-star", "workers": 2})";
  const std::string one = R"({"micro_batch": 1, "seq_len": 64})";
  // 7 as a bare number is 7 B/s: a unit slip.
  auto slow = run_with(R"({"topology": "luwu-star", "workers": 2, "network": 7})", R"(["ddp"])", one);
  CHECK(slow.exit_code == 2);
  CHECK(contains(slow.err, "$.cluster.network"));
  // A misspelt profile is named with its path and the nearest name.
  auto typo = run_with(R"({"topology": "luwu-star", "workers": 2, "profiles": {"gpu": "a100-40gb-sxn"}})", R"(["ddp"])", one);
  CHECK(typo.exit_code == 2);
  CHECK(contains(typo.err, "$.cluster.profiles.gpu"));
  CHECK(contains(typo.err, "a100-40gb-sxm"));
  // Two entries with one label would be indistinguishable in the results.
  auto twice = run_with(star, R"(["ddp", {"name": "ddp", "bucket_bytes": 1e6}])", one);
  CHECK(twice.exit_code == 2);
  CHECK(contains(twice.err, "$.systems[1]"));
  // Absurd device counts and oversubscription are refused, not built.
  auto ssds = run_with(R"({"topology": "luwu-star", "workers": 2, "nvme_per_worker": 100000})", R"(["ddp"])", one);
  CHECK(ssds.exit_code == 2);
  CHECK(contains(ssds.err, "$.cluster.nvme_per_worker"));
  auto over = run_with(R"({"topology": "fat-tree", "servers": 4, "oversubscription": 1e308})", R"(["ddp"])", one);
  CHECK(over.exit_code == 2);
  CHECK(contains(over.err, "$.cluster.oversubscription"));
  // 100,000 micro-batches on 8 GPUs: tens of millions of kernels, refused before anything runs.
  auto work = run_with(R"({"topology": "luwu-star", "workers": 8})", R"(["ddp"])",
                       R"({"micro_batch": 1, "seq_len": 64, "grad_accum": 100000})");
  CHECK(work.exit_code == 2);
  CHECK(contains(work.err, "$.training.grad_accum"));
  CHECK(contains(work.err, "budget"));
}

TEST_CASE("reliability: hardware numbers beyond any hardware are errors at their path, not deadlocks or null times") {
  // Each of these ran into SimGrid's "Deadlock detected" and a raw json type_error (exit 1).
  // An efficiency near zero did the same (1e-300), or gave a 1.5e97 s iteration (1e-100).
  for (const char* override_json : {R"("pcie-gen4-x16": {"latency": 1e308})", R"("a100-40gb-sxm": {"peak_fp16_flops": 1e-300})",
                                    R"("samsung-pm1733": {"read_bandwidth": 1e-300})",
                                    R"("a100-40gb-sxm": {"gemm_efficiency_max": 1e-300})",
                                    R"("a100-40gb-sxm": {"gemm_efficiency_max": 1e-100})",
                                    R"("a100-40gb-sxm": {"hbm_efficiency": 0.0009})"}) {
    CAPTURE(override_json);
    write_text("rel-extreme.json", std::string(R"({"model": "gpt3-125m", "training": {"micro_batch": 1, "seq_len": 64},
        "cluster": {"topology": "luwu-star", "workers": 2, "overrides": {)") + override_json + R"(}},
        "systems": ["zero3", "zero-infinity"]})");
    auto r = run_bounded("run rel-extreme.json");
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "$.cluster.overrides."));
  }
  std::remove("rel-extreme.json");
  // A topology file's link with a 1e308 s latency.
  REQUIRE(run_bounded("topo build --kind luwu-star --workers 2 -o rel-extreme-topo.json").exit_code == 0);
  json topo = json::parse(read_whole_file("rel-extreme-topo.json"));
  topo["links"][0]["latency_s"] = 1e308;
  write_text("rel-extreme-topo.json", topo.dump());
  write_text("rel-extreme.json", R"({"model": "gpt3-125m", "training": {"micro_batch": 1, "seq_len": 64},
      "cluster": {"topology_file": "rel-extreme-topo.json"}, "systems": ["ddp"]})");
  auto r = run_bounded("run rel-extreme.json");
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "$.links[0].latency_s"));
  std::remove("rel-extreme.json");
  std::remove("rel-extreme-topo.json");
}

TEST_CASE("reliability: trace gen with a million micro-batches is refused before it allocates") {
  // It aborted with bad_alloc: 1e6 x 3 x (12 + 2) ops of gpt3-125m is over the 1e7-op cap.
  auto r = run_bounded("trace gen --model gpt3-125m --micro-batch 1 --seq 64 --grad-accum 1000000 -o rel-huge-trace.json");
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "ops"));
  std::ifstream left("rel-huge-trace.json");
  CHECK_FALSE(left.good());
}

TEST_CASE("reliability: a sweep's results file and sweep-export's inputs must be files, not devices") {
  // Both read /dev/zero until the machine's memory ran out.
  auto sweep = run_bounded("sweep " + std::string(LUWUSIM_SOURCE_DIR) +
                           "/scenarios/small-zero3-vs-ddp.json --set cluster.workers=2 -o /dev/zero");
  CHECK(sweep.exit_code == 2);
  CHECK(contains(sweep.err, "/dev/zero"));
  auto merge = run_bounded("sweep-export /dev/zero --csv rel-never.csv");
  CHECK(merge.exit_code == 2);
  CHECK(contains(merge.err, "/dev/zero"));
}

TEST_CASE("reliability: LuWu with a PCIe latency of 0 runs (it crashed the simulation)") {
  write_text("rel-zero-latency.json", R"({"model": "gpt3-125m", "training": {"micro_batch": 1, "seq_len": 64},
      "cluster": {"topology": "luwu-star", "workers": 2, "overrides": {"pcie-gen4-x16": {"latency": 0}}},
      "systems": ["luwu", "zero3"]})");
  auto r = run_bounded("run rel-zero-latency.json --json");
  REQUIRE(r.exit_code == 0);
  const json results = json::parse(r.out)["results"];
  REQUIRE(results.size() == 2);
  for (const auto& res : results) {
    CHECK(res["feasible"] == true);
    CHECK(res["iteration_time_s"].get<double>() > 0);
  }
  std::remove("rel-zero-latency.json");
}

TEST_CASE("reliability: JSON nested thousands of levels deep is refused before any parse (it crashed sweep)") {
  // A sweep axis value, a sweep --set value, a scenario field and a sweep results line, each
  // 100,000 levels deep: `sweep --list` died with SIGSEGV (a recursive walk of the parsed value).
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  const std::string base = kSourceDir + "/scenarios/small-zero3-vs-ddp.json";
  write_text("rel-deep-sweep.json", R"({"base": ")" + base + R"(", "axes": {"training.micro_batch": [)" + deep + "]}}");
  write_text("rel-deep-scenario.json", R"({"name": "deep", "model": )" + deep + "}");
  write_text("rel-deep-results.jsonl", R"({"id": "0", "point": )" + deep + "}\n");
  for (const char* args : {"sweep rel-deep-sweep.json --list", "sweep rel-deep-sweep.json -o rel-deep.jsonl",
                           "run rel-deep-scenario.json", "all-reduce-bandwidth rel-deep-scenario.json",
                           "sweep-export rel-deep-results.jsonl --csv rel-deep.csv"}) {
    CAPTURE(args);
    auto r = run_bounded(args);
    CHECK(r.exit_code == 2);
    CHECK((contains(r.err, "nested more than 256 levels") || contains(r.err, "expected")));
  }
  // The sweep's own message names the file and where the nesting went too deep.
  auto sweep = run_bounded("sweep rel-deep-sweep.json --list");
  CHECK(contains(sweep.err, "rel-deep-sweep.json"));
  CHECK(contains(sweep.err, "nested more than 256 levels deep"));
  auto set = run_bounded("sweep " + base + " --set training.micro_batch=" + std::string(300, '[') + std::string(300, ']') + " --list");
  CHECK(set.exit_code == 2);
  CHECK(contains(set.err, "nested more than 256 levels deep"));
  // 256 levels are still read (and refused for what they are, not for their depth).
  write_text("rel-deep-scenario-256.json", R"({"name": "deep", "model": )" + std::string(255, '[') + std::string(255, ']') + "}");
  auto ok_depth = run_bounded("run rel-deep-scenario-256.json");
  CHECK(ok_depth.exit_code == 2);
  CHECK_FALSE(contains(ok_depth.err, "nested more than"));
}

TEST_CASE("every command's output into a folder that does not exist: exit 2 naming the path, nothing written") {
  // One row per option that writes a file (-o, --csv, --jsonl, --timeline), each command's own.
  const std::string scenario = std::string(LUWUSIM_SOURCE_DIR) + "/scenarios/small-zero3-vs-ddp.json";
  std::ofstream("rel-rates.csv") << "m,n,k,tflops\n2048,5120,6144,230\n";
  REQUIRE(run_luwusim("trace gen --model gpt3-125m --seq 64 -o rel-trace.json").exit_code == 0);
  REQUIRE(run_luwusim("trace export-chakra rel-trace.json -o rel-chakra.json").exit_code == 0);
  REQUIRE(run_luwusim("sweep " + scenario + " --set cluster.workers=2 --set systems=ddp -o rel-sweep.jsonl").exit_code == 0);
  REQUIRE(run_luwusim("topo build --kind luwu-star --workers 2 -o rel-topo.json").exit_code == 0);
  const std::vector<std::string> commands = {
      "run " + scenario + " --timeline rel-nodir/t.json",
      "sweep " + scenario + " --set cluster.workers=2 -o rel-nodir/s.jsonl",
      "sweep-export rel-sweep.jsonl --csv rel-nodir/s.csv",
      "sweep-export rel-sweep.jsonl --jsonl rel-nodir/s.jsonl",
      "search " + scenario + " --micro-batch 1 -o rel-nodir/s.jsonl",
      "trace gen --model gpt3-125m -o rel-nodir/t.json",
      "trace export-chakra rel-trace.json -o rel-nodir/c.json",
      "trace import-chakra rel-chakra.json -o rel-nodir/t.json",
      "topo build --kind luwu-star --workers 2 -o rel-nodir/t.json",
      "topo dot rel-topo.json -o rel-nodir/t.dot",
      "calibrate -o rel-nodir/p.json",
      "calibrate-gpu --profile a100-40gb-pcie --gemm-csv rel-rates.csv -o rel-nodir/g.json"};
  for (const std::string& command : commands) {
    CAPTURE(command);
    const auto r = run_luwusim(command, "timeout 120");
    CHECK(r.exit_code == 2);
    CHECK(contains(r.err, "rel-nodir"));
    CHECK_FALSE(std::filesystem::exists("rel-nodir"));
  }
  for (const char* f : {"rel-rates.csv", "rel-trace.json", "rel-chakra.json", "rel-sweep.jsonl", "rel-topo.json"})
    std::remove(f);
}
