// Workloads from files: `run --trace` and a scenario's "trace" replay a written trace exactly as the
// generated one; `run --kernel-times` times kernels by a Kineto profile; `trace export-chakra` and
// `trace import-chakra` convert; bad files are exit 2 naming the file and the JSON path.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "tests/cli/run_command.hpp"

namespace {

using nlohmann::json;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

const std::string kTraces = std::string(LUWUSIM_SOURCE_DIR) + "/scenarios/traces/";

// GPT-3 125M, 2 workers: DDP and ZeRO-3 (which gathers parameters kernel by kernel).
const char* kScenario = R"({"name": "file-workload", "model": "gpt3-125m",
  "training": {"micro_batch": 2, "seq_len": 256, "grad_accum": 2, "recompute": true},
  "cluster": {"topology": "luwu-star", "workers": 2, "network": "100Gb/s"}, "systems": ["ddp", "zero3"]})";

}  // namespace

TEST_CASE("run --trace of the trace gen wrote gives bit-identical results to the generated workload") {
  write_text("tw-scenario.json", kScenario);
  REQUIRE(run_luwusim("trace gen --model gpt3-125m --micro-batch 2 --seq 256 --grad-accum 2 --recompute -o tw-trace.json")
              .exit_code == 0);
  const auto generated = run_luwusim("run tw-scenario.json --json");
  const auto replayed = run_luwusim("run tw-scenario.json --trace tw-trace.json --json");
  REQUIRE(generated.exit_code == 0);
  REQUIRE(replayed.exit_code == 0);
  const json a = json::parse(generated.out), b = json::parse(replayed.out);
  CHECK(a["results"] == b["results"]);  // every number, bit for bit
  CHECK(b["scenario"]["trace"] == "tw-trace.json");
  CHECK(contains(replayed.err, "tw-trace.json"));

  // The same trace named by the scenario, which then has no model or training.
  json s = json::parse(kScenario);
  s.erase("model");
  s.erase("training");
  s["trace"] = "tw-trace.json";
  write_text("tw-scenario-trace.json", s.dump());
  const auto by_field = run_luwusim("run tw-scenario-trace.json --json");
  REQUIRE(by_field.exit_code == 0);
  CHECK(json::parse(by_field.out)["results"] == a["results"]);

  // Through Chakra and back: still the same workload.
  REQUIRE(run_luwusim("trace export-chakra tw-trace.json -o tw-chakra.json").exit_code == 0);
  REQUIRE(run_luwusim("trace import-chakra tw-chakra.json -o tw-trace-back.json").exit_code == 0);
  const auto via_chakra = run_luwusim("run tw-scenario.json --trace tw-trace-back.json --json");
  REQUIRE(via_chakra.exit_code == 0);
  CHECK(json::parse(via_chakra.out)["results"] == a["results"]);
  for (const char* f : {"tw-scenario.json", "tw-trace.json", "tw-scenario-trace.json", "tw-chakra.json", "tw-trace-back.json"})
    std::remove(f);
}

TEST_CASE("a scenario's trace: model or training beside it, or a missing file, is exit 2 at its path") {
  json s = json::parse(kScenario);
  s["trace"] = "no-such-trace.json";
  s.erase("model");
  s.erase("training");
  write_text("tw-missing.json", s.dump());
  auto missing = run_luwusim("run tw-missing.json");
  CHECK(missing.exit_code == 2);
  CHECK(contains(missing.err, "$.trace"));
  REQUIRE(run_luwusim("trace gen --model gpt3-125m --micro-batch 1 --seq 64 -o tw-t.json").exit_code == 0);
  json both = json::parse(kScenario);
  both["trace"] = "tw-t.json";
  write_text("tw-both.json", both.dump());
  auto twice = run_luwusim("run tw-both.json");
  CHECK(twice.exit_code == 2);
  CHECK(contains(twice.err, "tw-both.json"));
  CHECK(contains(twice.err, "$.model"));
  for (const char* f : {"tw-missing.json", "tw-t.json", "tw-both.json"}) std::remove(f);
}

TEST_CASE("run --kernel-times: the profile's kernels time the compute, and the summary counts what matched") {
  // The shipped format example (made-up durations): 27 GEMMs of 10..36 us (621 us), 4 attention
  // kernels of 20..50 us (140 us), 36 elementwise kernels of 3 us (108 us): one micro-batch.
  const auto r = run_luwusim("run " + kTraces + "tiny-gpt-kernel-times.json --json --system ddp");
  REQUIRE(r.exit_code == 0);
  const json out = json::parse(r.out);
  const json& k = out["scenario"]["kernel_times"];
  CHECK(k["analytic_kernel_launches"] == 0);
  CHECK(k["measured_kernel_launches"].get<int>() > 0);
  CHECK(k["excluded_communication_kernels"] == 2);
  CHECK(k["kinds"][0]["rule"] == "in-order");
  CHECK(k["kinds"][2]["rule"] == "scaled");
  CHECK(contains(r.err, "kernel launches measured"));
  const json& ddp = out["results"][0];
  const double undisturbed = ddp["breakdown_s"]["compute"].get<double>() - ddp["gpu_contention_s"]["compute_stretch"].get<double>();
  CHECK(undisturbed == doctest::Approx(621e-6 + 140e-6 + 108e-6).epsilon(1e-9));
}

TEST_CASE("run --kernel-times on another GPU: refused, or scaled with --allow-other-gpu, and --kernel-times-step taken") {
  // The toy scenario on H100s, timed by the format example measured (it says) on an A100.
  std::ifstream in(kTraces + "tiny-gpt-kernel-times.json");
  json toy = json::parse(in);
  toy["cluster"]["profiles"] = {{"gpu", "h100-80gb-sxm"}};
  toy["kernel_times"] = kTraces + "kineto-format-example.json";
  write_text("tw-h100.json", toy.dump());
  const auto refused = run_luwusim("run tw-h100.json --system ddp");
  CHECK(refused.exit_code == 2);
  CHECK(contains(refused.err, "$.deviceProperties"));
  CHECK(contains(refused.err, "--allow-other-gpu"));
  const auto scaled = run_luwusim("run tw-h100.json --system ddp --allow-other-gpu");
  CHECK(scaled.exit_code == 0);
  CHECK(contains(scaled.err, "scaled from NVIDIA A100-SXM4-40GB (a100-40gb-sxm)"));
  // The example marks no profiler steps, so a step asked for changes nothing: it is used whole.
  const auto step = run_luwusim("run tw-h100.json --system ddp --allow-other-gpu --kernel-times-step 3");
  CHECK(step.exit_code == 0);  // a profile without step marks is used whole
  CHECK_FALSE(contains(step.err, "profiler steps"));
  std::remove("tw-h100.json");
}

TEST_CASE("run --kernel-times with a bad profile is exit 2 naming the file and the JSON path") {
  write_text("tw-bad-profile.json", R"({"traceEvents": [{"ph": "X", "cat": "kernel", "name": "gemm", "ts": 1, "dur": -3}]})");
  const auto r = run_luwusim("run " + kTraces + "tiny-gpt-kernel-times.json --kernel-times tw-bad-profile.json");
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "tw-bad-profile.json"));
  CHECK(contains(r.err, "$.traceEvents[0].dur"));
  CHECK(r.out.empty());
  std::remove("tw-bad-profile.json");
}

TEST_CASE("trace import-chakra: a graph luwusim did not write needs the model, with it the report says what was used") {
  write_text("tw-foreign.json",
             R"({"version": "0.0.4"}
{"id": "1", "name": "sm80_xmma_gemm_f16f16", "type": "COMP_NODE", "durationMicros": "12", "attr": [{"name": "is_cpu_op", "boolVal": false}]}
{"id": "2", "name": "ncclDevKernel_AllReduce", "type": "COMM_COLL_NODE", "dataDeps": ["1"], "attr": [{"name": "comm_type", "int64Val": "0"}, {"name": "comm_size", "int64Val": "1024"}]}
)");
  auto no_model = run_luwusim("trace import-chakra tw-foreign.json -o tw-imported.json");
  CHECK(no_model.exit_code == 2);
  CHECK(contains(no_model.err, "tw-foreign.json"));
  CHECK(contains(no_model.err, "--model"));
  CHECK_FALSE(std::filesystem::exists("tw-imported.json"));
  auto with_model =
      run_luwusim("trace import-chakra tw-foreign.json -o tw-imported.json --model gpt3-125m --micro-batch 1 --seq 128 --json");
  REQUIRE(with_model.exit_code == 0);
  const json report = json::parse(with_model.out);
  CHECK(report["gpu_compute_nodes_used"] == 1);
  CHECK(report["collectives_dropped"] == 1);
  CHECK(report["collective_bytes_dropped"] == 1024);
  CHECK(report["kernel_times"]["kinds"][0]["rule"] == "scaled");  // 1 GEMM profiled, not one micro-step's
  CHECK(run_luwusim("trace show tw-imported.json").exit_code == 0);
  std::remove("tw-foreign.json");
  std::remove("tw-imported.json");
}

TEST_CASE("trace show --gpu times one block's kernels on the GPU by the profile's closed forms") {
  REQUIRE(run_luwusim("trace gen --model gpt3-125m --micro-batch 2 --seq 512 --dtype bf16 -o tg-trace.json").exit_code == 0);
  const auto r = run_luwusim("trace show tg-trace.json --gpu h100-80gb-sxm --json");
  REQUIRE(r.exit_code == 0);
  const auto block = nlohmann::json::parse(r.out)["block_on_gpu"];
  CHECK(block["gpu"] == "h100-80gb-sxm");
  // The H100 profile: 989 TFLOP/s bf16 at 0.694, no wave loss; 3.35 TB/s at 0.903 for streams,
  // 0.467 for a row reduction's bytes.
  const double matmul = 989e12 * 0.694, stream = 3.35e12 * 0.903, reduction = 3.35e12 * 0.467;
  for (const char* pass : {"forward", "backward"}) {
    CAPTURE(pass);
    const auto& p = block[pass];
    CHECK(p["layer"] == 1);
    double sum = 0;
    for (const auto& k : p["kernels"]) {
      const double s = k["seconds"].get<double>(), flops = k["flops"].get<double>(), bytes = k["bytes"].get<double>();
      const std::string name = k["name"].get<std::string>();
      CAPTURE(name);
      if (k["kind"] == "gemm") CHECK(s == doctest::Approx(std::max(flops / matmul, bytes / stream)).epsilon(1e-9));
      if (name.rfind("attention-norm", 0) == 0) CHECK(s == doctest::Approx(bytes / reduction).epsilon(1e-9));
      if (name.rfind("activation", 0) == 0) CHECK(s == doctest::Approx(bytes / stream).epsilon(1e-9));
      sum += s;
    }
    CHECK(p["seconds"].get<double>() == doctest::Approx(sum).epsilon(1e-12));
  }
  // The table says the same in words; a GPU that is no profile is exit 2.
  CHECK(run_luwusim("trace show tg-trace.json --gpu h100-80gb-sxm").out.find("block 1 forward on h100-80gb-sxm") !=
        std::string::npos);
  CHECK(run_luwusim("trace show tg-trace.json --gpu no-such-gpu").exit_code == 2);
  CHECK(run_luwusim("trace show tg-trace.json --gpu rdma-nic-100g").exit_code == 2);
  // A GPU without the trace's precision: refused before the summary is printed.
  const auto v100 = run_luwusim("trace show tg-trace.json --gpu v100-32gb-sxm");
  CHECK(v100.exit_code == 2);
  CHECK(v100.out.empty());
  CHECK(v100.err.find("does not support bf16") != std::string::npos);
  std::remove("tg-trace.json");
}
