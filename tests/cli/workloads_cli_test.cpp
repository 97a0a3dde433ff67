// `luwusim trace` and `luwusim memory` run as a user would: files in, numbers and exit codes out.
#include <doctest/doctest.h>

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

// GPT-3 175B parameters by hand: 96 blocks of 12h^2 + 13h (attention 4h^2 + 4h, FFN 8h^2 + 5h,
// two LayerNorms 4h), token and position embeddings (50257 + 2048) h, final LayerNorm 2h.
constexpr double kH = 12288;
const double kGpt3Params = 96 * (12 * kH * kH + 13 * kH) + (50257 + 2048) * kH + 2 * kH;

}  // namespace

TEST_CASE("trace gen writes a trace and trace show --json reports params and Megatron FLOPs") {
  const std::string file = "wl-cli-175b.json";
  std::remove(file.c_str());
  auto gen = run_luwusim("trace gen --model gpt3-175b --micro-batch 16 --seq 2048 --grad-accum 2 -o " + file);
  REQUIRE(gen.exit_code == 0);
  CHECK(std::filesystem::exists(file));

  auto show = run_luwusim("trace show " + file + " --json");
  REQUIRE(show.exit_code == 0);
  json summary = json::parse(show.out);
  CHECK(summary["params"].is_number_integer());
  CHECK(summary["params"].get<double>() == doctest::Approx(kGpt3Params).epsilon(1e-12));
  // Megatron-LM (arXiv 2104.04473 appendix), without recomputation: 72 B s l h^2 (1 + s/(6h) + V/(12 l h)).
  const double B = 16 * 2, s = 2048, l = 96, V = 50257;
  CHECK(summary["flops_per_iteration"].get<double>() ==
        doctest::Approx(72 * B * s * l * kH * kH * (1 + s / (6 * kH) + V / (12 * l * kH))).epsilon(0.01));
  CHECK(summary["tokens_per_iteration"].get<double>() == B * s);

  auto human = run_luwusim("trace show " + file);
  CHECK(human.exit_code == 0);
  CHECK(contains(human.out, "174.60B"));
  CHECK(contains(human.out, "PFLOP"));
  CHECK(contains(human.out, "GB"));
  CHECK(contains(human.out, "block_95"));
  std::remove(file.c_str());
}

TEST_CASE("trace gen accepts a model JSON file") {
  write_text("wl-cli-tiny-model.json",
             R"({"name": "tiny", "layers": 2, "hidden": 64, "heads": 4, "vocab": 100, "max_seq": 32})");
  auto gen = run_luwusim("trace gen --model wl-cli-tiny-model.json --seq 32 --recompute -o wl-cli-tiny.json");
  CHECK(gen.exit_code == 0);
  auto show = run_luwusim("trace show wl-cli-tiny.json --json");
  REQUIRE(show.exit_code == 0);
  // 2 blocks of 12h^2 + 13h, embeddings (100 + 32) h, final LayerNorm 2h; h = 64.
  CHECK(json::parse(show.out)["params"].get<long long>() == 2 * (12 * 64 * 64 + 13 * 64) + 132 * 64 + 2 * 64);
  std::remove("wl-cli-tiny-model.json");
  std::remove("wl-cli-tiny.json");
}

TEST_CASE("a malformed model file gives exit 2 with the file and JSON path on stderr and writes no output") {
  write_text("wl-cli-bad-model.json",
             R"({"layers": 2, "hiden": 64, "heads": 4, "vocab": 100, "max_seq": 32})");
  std::remove("wl-cli-never.json");
  auto r = run_luwusim("trace gen --model wl-cli-bad-model.json -o wl-cli-never.json");
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "wl-cli-bad-model.json"));
  CHECK(contains(r.err, "$.hiden"));
  CHECK(contains(r.err, "did you mean \"hidden\""));
  CHECK(!std::filesystem::exists("wl-cli-never.json"));
  std::remove("wl-cli-bad-model.json");
}

TEST_CASE("a malformed trace: exit 2 with the file and JSON path") {
  REQUIRE(run_luwusim("trace gen --model gpt3-125m --seq 64 -o wl-cli-good.json").exit_code == 0);
  json doc = json::parse(read_whole_file("wl-cli-good.json"));
  doc["ops"][3]["layer"] = 1000;
  write_text("wl-cli-bad-trace.json", doc.dump());
  auto r = run_luwusim("trace show wl-cli-bad-trace.json");
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "wl-cli-bad-trace.json"));
  CHECK(contains(r.err, "$.ops[3].layer"));
  CHECK(r.out.empty());

  write_text("wl-cli-bad-trace.json", "{\"format\": \"luwusim-trace\", ");  // truncated
  r = run_luwusim("trace show wl-cli-bad-trace.json");
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "wl-cli-bad-trace.json"));
  std::remove("wl-cli-good.json");
  std::remove("wl-cli-bad-trace.json");
}

TEST_CASE("bad trace gen arguments are exit 2 and write nothing") {
  std::remove("wl-cli-never.json");
  auto r = run_luwusim("trace gen --model gpt3-175 -o wl-cli-never.json");
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "did you mean \"gpt3-175b\""));
  r = run_luwusim("trace gen --model bert-large --seq 1024 -o wl-cli-never.json");  // BERT's context is 512
  CHECK(r.exit_code == 2);
  CHECK(contains(r.err, "512"));
  r = run_luwusim("trace gen --model gpt3-125m --dtype fp8 -o wl-cli-never.json");
  CHECK(r.exit_code == 2);
  r = run_luwusim("trace gen --model gpt3-125m --micro-batch 0 -o wl-cli-never.json");
  CHECK(r.exit_code == 2);
  CHECK(!std::filesystem::exists("wl-cli-never.json"));
}

TEST_CASE("trace models lists the catalog") {
  auto r = run_luwusim("trace models");
  CHECK(r.exit_code == 0);
  for (const char* name : {"gpt3-125m", "gpt3-175b", "megatron-145.6b", "opt-66b", "llama2-70b", "bert-large"})
    CHECK(contains(r.out, name));
}

TEST_CASE("memory: DDP of GPT-3 175B does not fit 40 GB (exit 0 and fits false) and ZeRO-3 holds 16 P / N") {
  auto ddp = run_luwusim("memory --model gpt3-175b --system ddp --workers 8 --gpu-mem 40GB --recompute --json");
  REQUIRE(ddp.exit_code == 0);
  json d = json::parse(ddp.out);
  CHECK(d["fits"] == false);
  CHECK(contains(d["reason"].get<std::string>(), "does not fit"));
  CHECK(d["gpu_params_bytes"].get<double>() + d["gpu_grads_bytes"].get<double>() +
            d["gpu_optimizer_bytes"].get<double>() ==
        16 * kGpt3Params);

  auto z3 = run_luwusim("memory --model gpt3-175b --system zero3 --workers 8 --gpu-mem 40GB --json");
  REQUIRE(z3.exit_code == 0);
  json z = json::parse(z3.out);
  CHECK(z["gpu_params_bytes"].get<double>() + z["gpu_grads_bytes"].get<double>() +
            z["gpu_optimizer_bytes"].get<double>() ==
        16 * kGpt3Params / 8);

  auto all = run_luwusim("memory --model gpt3-125m --workers 4 --gpu-mem 40GB --seq 512");
  CHECK(all.exit_code == 0);
  for (const char* s : {"ddp", "zero3", "zero-offload", "zero-infinity", "switchml", "luwu"}) CHECK(contains(all.out, s));
  CHECK(contains(all.out, "GB"));
}

TEST_CASE("memory: --param-fetch and --prefetch-layers choose how ZeRO-3 gathers") {
  // GPT-3 175B, h = 12288: per layer, the block being computed and --prefetch-layers blocks ahead,
  // parameters and gradients at 2 B (12h^2 + 13h each).
  const double block = 12.0 * 12288 * 12288 + 13.0 * 12288;
  auto buffers = [](const std::string& flags) {
    auto r = run_luwusim("memory --model gpt3-175b --system zero3 --workers 8 --gpu-mem 40GB --json " + flags);
    REQUIRE(r.exit_code == 0);
    return json::parse(r.out)["gpu_buffer_bytes"].get<double>();
  };
  CHECK(buffers("--param-fetch layer") == 2 * 2 * 2 * block);
  CHECK(buffers("--prefetch-layers 2") == 3 * 2 * 2 * block);
  CHECK(buffers("--param-fetch sub-module") == buffers(""));
  CHECK(buffers("") < 2 * 2 * 2 * block);
  CHECK(run_luwusim("memory --model gpt3-175b --system zero3 --workers 8 --gpu-mem 40GB --param-fetch block").exit_code == 2);
}

TEST_CASE("memory: bad arguments are exit 2") {
  CHECK(run_luwusim("memory --model gpt3-175b --system zero-3 --workers 8 --gpu-mem 40GB").exit_code == 2);
  CHECK(run_luwusim("memory --model gpt3-175b --system ddp --workers 8 --gpu-mem 40XB").exit_code == 2);
  // A quantity on the command line names its unit: a bare 40 is not silently 40 bytes.
  auto bare = run_luwusim("memory --model gpt3-175b --system ddp --workers 8 --gpu-mem 40");
  CHECK(bare.exit_code == 2);
  CHECK(contains(bare.err, "--gpu-mem 40: give a unit"));
  CHECK(run_luwusim("memory --model gpt3-175b --system ddp --workers 0 --gpu-mem 40GB").exit_code == 2);
  CHECK(run_luwusim("memory --model nope --system ddp --workers 8 --gpu-mem 40GB").exit_code == 2);
}

TEST_CASE("memory SCENARIO gives run's verdict for every system, on the scenario's own cluster") {
  // A cluster where every kind of verdict occurs: DDP and SwitchML hold a 175B replica (no fit),
  // LuWu fits its GPUs but its optimizer node without SSDs cannot hold 14 B x 175e9 (host capacity),
  // ZeRO-Infinity in DRAM fits.
  write_text("wl-cli-mem-scenario.json", R"({"model": "gpt3-175b",
    "training": {"micro_batch": 1, "seq_len": 512, "recompute": true},
    "cluster": {"topology": "luwu-star", "workers": 8, "optimizer_ssds": 0},
    "systems": ["ddp", "switchml", "luwu", {"name": "zero-infinity", "offload": "dram"}]})");
  auto mem = run_luwusim("memory wl-cli-mem-scenario.json --json");
  REQUIRE(mem.exit_code == 0);
  auto run = run_luwusim("run wl-cli-mem-scenario.json --json --mode coarse");
  REQUIRE(run.exit_code == 0);
  json m = json::parse(mem.out), r = json::parse(run.out)["results"];
  REQUIRE(m.size() == 4);
  REQUIRE(r.size() == 4);
  for (std::size_t i = 0; i < 4; ++i) {
    CAPTURE(m[i]["system"].get<std::string>());
    CHECK(m[i]["system"] == r[i]["system"]);
    CHECK(m[i]["runs"] == r[i]["feasible"]);
    if (!m[i]["runs"].get<bool>()) CHECK(m[i]["problem"] == r[i]["reason"]);
    CHECK(m[i]["gpu_total_bytes"] == r[i]["memory"]["gpu_total_bytes"]);
  }
  CHECK(m[0]["runs"] == false);
  CHECK(contains(m[2]["problem"].get<std::string>(), "optimizer node"));
  // Scenario and model flags are two ways to ask, not one.
  CHECK(run_luwusim("memory wl-cli-mem-scenario.json --model gpt3-175b").exit_code == 2);
  std::remove("wl-cli-mem-scenario.json");
}
