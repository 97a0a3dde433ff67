// The hostile-input table: each row is an input a user (or an attacker) can give a door of the
// command line, run for real; the test asserts its exit code and message, then renders the rows as
// docs/hostile-inputs.md and fails if the committed page differs, so the page cannot drift from
// what the program does.  Regenerate the page with LUWUSIM_WRITE_DOCS=1 (see the page's header).
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <unistd.h>

#include "tests/cli/run_command.hpp"

namespace {

struct HostileCase {
  std::string door;      // where the input enters
  std::string input;     // what it is
  std::string command;   // arguments to luwusim, run from the test's folder
  int exit_code;         // what the command must exit with
  std::string message;   // a part of stderr it must print
  std::function<void()> setup = [] {};
};

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

const std::string kBase = std::string(LUWUSIM_SOURCE_DIR) + "/scenarios/small-zero3-vs-ddp.json";
const std::string kTiny = R"({"name": "tiny", "model": "gpt3-125m", "training": {"micro_batch": 1, "seq_len": 64},
  "cluster": {"topology": "luwu-star", "workers": 2}, "systems": ["ddp"]})";

std::string nested(int depth) { return std::string(depth, '[') + std::string(depth, ']'); }

std::vector<HostileCase> hostile_cases() {
  return {
      {"scenario file", "`/dev/zero`", "run /dev/zero", 2, "is not a regular file"},
      {"scenario file", "a FIFO", "run hostile-fifo", 2, "is not a regular file",
       [] {
         std::remove("hostile-fifo");
         REQUIRE(::mkfifo("hostile-fifo", 0600) == 0);
       }},
      {"scenario file", "a directory", "run " + std::string(LUWUSIM_SOURCE_DIR) + "/scenarios", 2, "is a directory"},
      {"scenario file", "a 600 MiB file", "run hostile-big.json", 2, "input files are at most 512 MiB",
       [] {
         write_text("hostile-big.json", "{}");
         REQUIRE(::truncate("hostile-big.json", 600ll << 20) == 0);  // sparse: no 600 MiB written
       }},
      {"scenario file", "arrays nested 100,000 levels deep", "run hostile-deep.json", 2, "nested more than 256 levels deep",
       [] { write_text("hostile-deep.json", R"({"model": )" + nested(100000) + "}"); }},
      {"scenario file", "70 million empty objects in 210 MB, under the size cap (grew past 14 GB)", "run hostile-objects.json", 2,
       "JSON of more than 64 million values",
       [] {
         std::string text = "[";
         text.reserve(210'000'000);
         for (int i = 0; i < 70'000'000; ++i) text += i ? ",{}" : "{}";
         write_text("hostile-objects.json", text + "]");
       }},
      {"scenario field", "a 5 MB model name", "run hostile-name.json", 2, "bytes left out",
       [] { write_text("hostile-name.json", R"({"model": ")" + std::string(5'000'000, 'x') + R"("})"); }},
      {"hardware override", "`gemm_efficiency_max` 1e-300 (stalled the engine)", "run hostile-efficiency.json", 2,
       "must be a fraction in [0.001, 1]",
       [] {
         write_text("hostile-efficiency.json",
                    R"({"model": "gpt3-125m", "training": {"micro_batch": 1, "seq_len": 64}, "cluster": {"topology": "luwu-star",
                        "workers": 2, "overrides": {"a100-40gb-sxm": {"gemm_efficiency_max": 1e-300}}}, "systems": ["ddp"]})");
       }},
      {"sweep file", "`/dev/zero`", "sweep /dev/zero --list", 2, "is not a regular file"},
      {"sweep file", "an axis value nested 100,000 levels deep (crashed `sweep`)", "sweep hostile-deep-sweep.json --list", 2,
       "nested more than 256 levels deep",
       [] {
         write_text("hostile-deep-sweep.json",
                    R"({"base": ")" + kBase + R"(", "axes": {"training.micro_batch": [)" + nested(100000) + "]}}");
       }},
      {"sweep file", "1,001 x 1,001 points", "sweep hostile-many.json --list", 2, "more than 1000000 points",
       [] {
         std::string values = "[0";
         for (int v = 1; v < 1001; ++v) values += "," + std::to_string(v);
         values += "]";
         write_text("hostile-many.json",
                    R"({"base": ")" + kBase + R"(", "axes": {"a": )" + values + R"(, "b": )" + values + "}}");
       }},
      {"sweep `--set`", "a value nested 300 levels deep", "sweep " + kBase + " --set training.micro_batch=" + nested(300) + " --list", 2,
       "nested more than 256 levels deep"},
      {"sweep `-o`", "a folder that does not exist", "sweep " + kBase + " --set cluster.workers=2 -o hostile-nodir/x.jsonl", 2,
       "hostile-nodir"},
      {"sweep-export", "a results file whose last line is cut off", "sweep-export hostile-cut.jsonl --csv hostile-cut.csv", 2,
       "the last line is cut off", [] { write_text("hostile-cut.jsonl", R"({"id": "0-1", "point": {"a": 1}, "res)"); }},
      {"Kineto profile (`run --kernel-times`)", "`/dev/zero`", "run " + kBase + " --kernel-times /dev/zero", 2,
       "is not a regular file"},
      {"Chakra graph (`trace import-chakra`)", "`/dev/zero`", "trace import-chakra /dev/zero -o hostile-chakra-out.json", 2,
       "is not a regular file"},
      {"Chakra graph (`trace import-chakra`)", "a node nested 100,000 levels deep, in the jsonizer's form of one object after another",
       "trace import-chakra hostile-deep.chakra.json -o hostile-chakra-out.json", 2, "nested more than 256 levels deep",
       [] {
         write_text("hostile-deep.chakra.json",
                    "{\"version\": \"0.0.4\"}\n{\"id\": \"1\", \"attr\": " + nested(100000) + "}\n");
       }},
      {"Chakra graph (`trace import-chakra`)", "an .et whose first message announces 256 MiB the file does not hold",
       "trace import-chakra hostile-cut.et -o hostile-chakra-out.json", 2, "the message is cut off",
       [] { write_text("hostile-cut.et", std::string("\x80\x80\x80\x80\x01", 5) + "short"); }},
      {"topology file", "a link whose profile does not exist (named neither the file nor the field)",
       "topo show hostile-topology.json", 2, "at $.links[0].profile",
       [] {
         write_text("hostile-topology.json",
                    R"({"vertices": [{"name": "gpu0", "kind": "gpu", "server": 0}, {"name": "nic0", "kind": "nic", "server": 0},
                        {"name": "switch", "kind": "switch", "ports": 2, "port_Bps": "100Gb/s"}],
                        "links": [{"kind": "pcie", "from": "gpu0", "to": "nic0", "bandwidth_Bps": "25GB/s", "latency_s": "1us",
                        "profile": "pcie-gen9-x16"},
                        {"kind": "ethernet", "from": "nic0", "to": "switch", "bandwidth_Bps": "100Gb/s", "latency_s": "1us"}]})");
       }},
      {"topology file", "a GPU host of 1e-300 FLOP/s (gave 0 s of compute: the engine's work units underflowed)",
       "topo show hostile-speed.json", 2, "at $.vertices[0].speed_flops",
       [] {
         write_text("hostile-speed.json",
                    R"({"vertices": [{"name": "gpu0", "kind": "gpu", "server": 0, "speed_flops": 1e-300},
                        {"name": "nic0", "kind": "nic", "server": 0},
                        {"name": "switch", "kind": "switch", "ports": 2, "port_Bps": "100Gb/s"}],
                        "links": [{"kind": "pcie", "from": "gpu0", "to": "nic0", "bandwidth_Bps": "25GB/s", "latency_s": "1us"},
                        {"kind": "ethernet", "from": "nic0", "to": "switch", "bandwidth_Bps": "100Gb/s", "latency_s": "1us"}]})");
       }},
      {"search", "`/dev/zero`", "search /dev/zero", 2, "is not a regular file"},
      {"compare", "`/dev/zero`", "compare /dev/zero", 2, "is not a regular file"},
      {"`run --timeline`", "a folder that does not exist (was found only after simulating)",
       "run " + kBase + " --timeline hostile-nodir/t.json", 2, "the folder hostile-nodir does not exist"},
      {"`search -o`", "a folder that does not exist", "search " + kBase + " --micro-batch 1 -o hostile-nodir/s.jsonl", 2,
       "the folder hostile-nodir does not exist"},
      {"cluster", "32,768 servers of 8 GPUs, 1,024 SSDs and 1,024 CXL expanders each (took 12 GB and minutes, then more)",
       "run hostile-cluster.json", 2, "a topology builder makes",
       [] {
         write_text("hostile-cluster.json",
                    R"({"model": "gpt3-125m", "training": {"micro_batch": 1, "seq_len": 64},
                        "cluster": {"topology": "fat-tree", "servers": 32768, "gpus_per_server": 8, "nvme_per_server": 1024,
                        "cxl_per_server": 1024}, "simulation": {"fold_data_parallel": 16}, "systems": ["ddp"]})");
       }},
      {"`simulation.fold_data_parallel`", "a fold of 8 ranks inside one 8-GPU server (failed after the platform was built)",
       "run hostile-fold.json", 2, "sit in 1 server",
       [] {
         write_text("hostile-fold.json",
                    R"({"model": "gpt3-125m", "training": {"micro_batch": 1, "seq_len": 64},
                        "cluster": {"topology": "dgx", "servers": 3, "gpus_per_server": 8}, "simulation": {"fold_data_parallel": 8},
                        "systems": ["ddp"]})");
       }},
  };
}

// The page, from the rows: one line per case, with the exact exit code and message part.
std::string render(const std::vector<HostileCase>& cases) {
  std::string page =
      "# Hostile inputs: what each door refuses\n\n"
      "Generated by `tests/cli/hostile_inputs_test.cpp`, which runs every row below against the real\n"
      "binary and fails when this page differs from what it renders: the table cannot drift from the\n"
      "program. After changing a row, regenerate with\n"
      "`LUWUSIM_WRITE_DOCS=1 ctest --test-dir build -R hostile`. Every refusal names the file (and the\n"
      "JSON path or line of the bad value where there is one) and exits 2 before any simulation\n"
      "starts; nothing is half-written. The loaders' fuzz regressions (`fuzz/regressions/`) and the\n"
      "reliability tests (`tests/cli/reliability_cli_test.cpp`) cover more cases than this table lists.\n\n"
      "| door | input | command | exit | message contains |\n|---|---|---|---|---|\n";
  for (const auto& c : cases) {
    std::string command = c.command;
    const std::string source = LUWUSIM_SOURCE_DIR;
    for (std::size_t at; (at = command.find(source)) != std::string::npos;) command.replace(at, source.size(), ".");
    if (command.size() > 90) command = command.substr(0, 60) + "...";
    page += "| " + c.door + " | " + c.input + " | `luwusim " + command + "` | " + std::to_string(c.exit_code) + " | " +
            c.message + " |\n";
  }
  return page;
}

}  // namespace

TEST_CASE("hostile inputs: every door refuses them with its exit code and message, and docs/hostile-inputs.md says so") {
  const auto cases = hostile_cases();
  for (const auto& c : cases) {
    CAPTURE(c.command);
    c.setup();
    const auto r = run_luwusim(c.command, "timeout 60");
    CHECK(r.exit_code == c.exit_code);
    CHECK(r.err.find(c.message) != std::string::npos);
    CHECK(r.err.size() < 20000);  // never the input echoed back whole
  }
  for (const char* f : {"hostile-fifo", "hostile-big.json", "hostile-objects.json", "hostile-deep.json", "hostile-name.json", "hostile-efficiency.json",
                        "hostile-deep-sweep.json", "hostile-many.json", "hostile-cut.jsonl", "hostile-cut.csv", "hostile-fold.json", "hostile-cluster.json",
                        "hostile-deep.chakra.json", "hostile-chakra-out.json", "hostile-cut.et", "hostile-topology.json",
                        "hostile-speed.json"})
    std::remove(f);
  const std::string doc_path = std::string(LUWUSIM_SOURCE_DIR) + "/docs/hostile-inputs.md";
  const std::string page = render(cases);
  if (const char* write = std::getenv("LUWUSIM_WRITE_DOCS"); write && std::string(write) == "1") {
    std::ofstream(doc_path) << page;
  }
  CHECK_MESSAGE(read_whole_file(doc_path) == page,
                "docs/hostile-inputs.md is not what the table renders: LUWUSIM_WRITE_DOCS=1 ctest --test-dir build -R hostile");
}
