// `trace gen` with a tensor x pipeline layout writes one GPU of one stage; `trace show` reads it
// back; bad layouts are exit 2 with the reason; `run` refuses to replay a stage trace (a scenario's
// "parallelism" simulates every stage).
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>

#include <nlohmann/json.hpp>

#include "tests/cli/run_command.hpp"

namespace {

using nlohmann::json;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

}  // namespace

TEST_CASE("trace gen --tensor-parallel --pipeline-parallel --stage writes one GPU of that stage") {
  // Custom-175B (96 blocks) over 16 stages: stage 3 holds blocks 18..23.  Per micro-batch and block
  // 2 all-reduces forward and 2 backward of b s h x 2 bytes (fp16); per micro-batch one activation
  // sent forward and one gradient backward, each 1/8 of b s h x 2 bytes per GPU and all-gathered
  // whole over the tensor group on arrival (Megatron-LM's scatter_gather_tensors_in_pipeline).
  const auto gen = run_luwusim("trace gen --model custom-175b --micro-batch 1 --seq 256 --grad-accum 4 --tensor-parallel 8 "
                               "--pipeline-parallel 16 --data-parallel 32 --stage 3 -o pt-stage.json");
  REQUIRE(gen.exit_code == 0);
  CHECK(contains(gen.err, "one GPU of stage 3"));
  const auto show = run_luwusim("trace show pt-stage.json --json");
  REQUIRE(show.exit_code == 0);
  const json summary = json::parse(show.out);
  const std::uint64_t bsh2 = 1ull * 256 * 12288 * 2;
  CHECK(summary["version"] == 3);
  CHECK(summary["tensor_parallel"] == 8);
  CHECK(summary["pipeline_parallel"] == 16);
  CHECK(summary["data_parallel"] == 32);
  CHECK(summary["stage"] == 3);
  CHECK(summary["pipeline_schedule"] == "1f1b");
  CHECK(summary["ops"] == 4 * (6 * (1 + 2 + 1 + 2) + 4 + 2));
  CHECK(summary["tensor_collective_bytes_per_iteration"] == 4 * 6 * 4 * bsh2 + 4 * 2 * bsh2);
  CHECK(summary["pipeline_send_bytes_per_iteration"] == 2 * 4 * bsh2 / 8);
  const auto text = run_luwusim("trace show pt-stage.json");
  REQUIRE(text.exit_code == 0);
  CHECK(contains(text.out, "tensor 8 x pipeline 16 x data 32, 1f1b; stage 3 of 16: blocks 18..23"));

  // Sequence parallelism: the sends are / 8.
  REQUIRE(run_luwusim("trace gen --model custom-175b --micro-batch 1 --seq 256 --grad-accum 4 --tensor-parallel 8 "
                      "--pipeline-parallel 16 --stage 3 --sequence-parallel --pipeline-schedule gpipe -o pt-sp.json")
              .exit_code == 0);
  const json sp = json::parse(run_luwusim("trace show pt-sp.json --json").out);
  CHECK(sp["sequence_parallel"] == true);
  CHECK(sp["pipeline_schedule"] == "gpipe");
  CHECK(sp["pipeline_send_bytes_per_iteration"] == 2 * 4 * bsh2 / 8);

  // Interleaved 1F1B: 6 blocks per stage in chunks of 3, stage 3 holding virtual stages 3 and 19.
  REQUIRE(run_luwusim("trace gen --model custom-175b --micro-batch 1 --seq 256 --grad-accum 16 --tensor-parallel 8 "
                      "--pipeline-parallel 16 --stage 3 --num-layers-per-virtual-pipeline-stage 3 -o pt-il.json")
              .exit_code == 0);
  const auto interleaved = run_luwusim("trace show pt-il.json");
  REQUIRE(interleaved.exit_code == 0);
  CHECK(contains(interleaved.out, "1f1b interleaved, 2 chunks of 3 blocks; stage 3 of 16: blocks 9..11, 57..59"));
  const auto uneven = run_luwusim("trace gen --model custom-175b --micro-batch 1 --seq 256 --grad-accum 4 "
                                  "--pipeline-parallel 16 --num-layers-per-virtual-pipeline-stage 3 -o pt-bad.json");
  CHECK(uneven.exit_code == 2);
  CHECK(contains(uneven.err, "grad_accum (4) must be a multiple of pipeline parallelism (16)"));

  // A stage trace holds one stage: replaying it is refused, pointing to a scenario's "parallelism".
  std::ofstream("pt-scenario.json") << R"({"name": "pt", "cluster": {"topology": "luwu-star", "workers": 2,
    "network": "100Gb/s"}, "systems": ["ddp"], "trace": "pt-stage.json"})";
  const auto run = run_luwusim("run pt-scenario.json");
  CHECK(run.exit_code == 2);
  CHECK(contains(run.err, "holds one stage"));
  CHECK(contains(run.err, "\"parallelism\""));
  for (const char* f : {"pt-stage.json", "pt-sp.json", "pt-il.json", "pt-scenario.json"}) std::remove(f);
}

TEST_CASE("trace gen with a bad layout is exit 2 with the reason and writes nothing") {
  const std::string base = "trace gen --model custom-175b --micro-batch 1 --seq 256 -o pt-bad.json ";
  const auto heads = run_luwusim(base + "--tensor-parallel 5");
  CHECK(heads.exit_code == 2);
  CHECK(contains(heads.err, "tensor parallelism 5 must divide the heads (96)"));
  const auto stage = run_luwusim(base + "--pipeline-parallel 4 --stage 4");
  CHECK(stage.exit_code == 2);
  CHECK(contains(stage.err, "stage 4 is not one of the pipeline's stages 0..3"));
  const auto schedule = run_luwusim(base + "--pipeline-parallel 4 --pipeline-schedule gpip");
  CHECK(schedule.exit_code == 2);
  CHECK(contains(schedule.err, "unknown pipeline schedule \"gpip\" (did you mean \"gpipe\"?)"));
  const auto sp = run_luwusim(base + "--sequence-parallel");
  CHECK(sp.exit_code == 2);
  CHECK(contains(sp.err, "needs tensor parallelism above 1"));
  std::ifstream written("pt-bad.json");
  CHECK_FALSE(written.good());
}

TEST_CASE("trace gen --attention-scores and --attention-layout-copies reach the trace's training, bad values exit 2") {
  REQUIRE(run_luwusim("trace gen --model opt-1.3b --micro-batch 1 --seq 256 --attention-scores hugging-face-opt "
                      "--attention-layout-copies 5 -o pt-attention.json")
              .exit_code == 0);
  json written;
  std::ifstream("pt-attention.json") >> written;
  CHECK(written["training"]["attention_scores"] == "hugging-face-opt");
  CHECK(written["training"]["attention_layout_copies"] == 5);
  bool clamp = false;
  for (const auto& list : written["kernel_lists"])
    for (const auto& k : list) clamp = clamp || k["name"] == "attention-clamp backward";
  CHECK(clamp);
  std::remove("pt-attention.json");
  const auto bad = run_luwusim("trace gen --model opt-1.3b --seq 256 --attention-scores hf -o pt-attention-bad.json");
  CHECK(bad.exit_code == 2);
  CHECK(contains(bad.err, "unknown attention score kernels \"hf\""));
  std::ifstream none("pt-attention-bad.json");
  CHECK_FALSE(none.good());
}

TEST_CASE("run: the shipped tensor x pipeline x data scenario reports its layout and the model-parallel waits") {
  const std::string scenario = std::string(LUWUSIM_SOURCE_DIR) + "/scenarios/parallelism/gpt3-1.3b-tp8-pp2-dgx.json";
  const auto table = run_luwusim("run " + scenario + " --system ddp");
  REQUIRE(table.exit_code == 0);
  CHECK(contains(table.out, "layout: tensor 8 x pipeline 2 (1f1b) x data 2"));
  CHECK(contains(table.out, "Tensor and pipeline parallelism"));
  const auto out = run_luwusim("run " + scenario + " --system ddp --json");
  REQUIRE(out.exit_code == 0);
  const json j = json::parse(out.out);
  CHECK(j["scenario"]["parallelism"]["data"] == 2);
  CHECK(j["scenario"]["workers"] == 32);
  const json& r = j["results"][0];
  // Both parts are waits of the compute stream, inside its exposed communication.
  const double tensor = r["model_parallel_s"]["tensor_collectives"], pipeline = r["model_parallel_s"]["pipeline_waits"];
  CHECK(tensor > 0);
  CHECK(pipeline > 0);
  CHECK(tensor + pipeline <= r["breakdown_s"]["exposed_communication"].get<double>() * (1 + 1e-12));
}

TEST_CASE("run: the shipped interleaved scenario names its chunks and waits less for its pipeline than 1F1B") {
  // Same stages, 2 chunks each: the bubble halves (closed form in workloads' tests), the transfers double.
  const std::string dir = std::string(LUWUSIM_SOURCE_DIR) + "/scenarios/parallelism/";
  const auto table = run_luwusim("run " + dir + "gpt3-1.3b-tp8-pp2-interleaved-dgx.json --system ddp");
  REQUIRE(table.exit_code == 0);
  CHECK(contains(table.out, "layout: tensor 8 x pipeline 2 (1f1b interleaved, chunks of 6 blocks) x data 2"));
  auto pipeline_waits = [&](const std::string& file) {
    const auto out = run_luwusim("run " + dir + file + " --system ddp --json");
    REQUIRE(out.exit_code == 0);
    return json::parse(out.out)["results"][0]["model_parallel_s"]["pipeline_waits"].get<double>();
  };
  CHECK(pipeline_waits("gpt3-1.3b-tp8-pp2-interleaved-dgx.json") < pipeline_waits("gpt3-1.3b-tp8-pp2-dgx.json"));
}

TEST_CASE("memory: a tensor x pipeline x data scenario is judged per stage, as run judges it") {
  const std::string scenario = std::string(LUWUSIM_SOURCE_DIR) + "/scenarios/parallelism/gpt3-1.3b-tp8-pp2-dgx.json";
  const auto table = run_luwusim("memory " + scenario);
  REQUIRE(table.exit_code == 0);
  CHECK(contains(table.out, "layout: tensor 8 x pipeline 2 x data 2"));
  const auto memory = run_luwusim("memory " + scenario + " --system ddp --json");
  REQUIRE(memory.exit_code == 0);
  const json row = json::parse(memory.out);
  const auto ran = run_luwusim("run " + scenario + " --system ddp --json");
  REQUIRE(ran.exit_code == 0);
  const json result = json::parse(ran.out)["results"][0];
  CHECK(row["system"] == result["system"]);
  CHECK(row["runs"] == result["feasible"]);
  for (const char* key : {"gpu_params_bytes", "gpu_grads_bytes", "gpu_optimizer_bytes", "gpu_activation_bytes",
                          "gpu_total_bytes", "host_bytes_per_worker"})
    CHECK(row[key] == result["memory"][key]);
  // A GPU holds one stage's tensor slice: GPT-3 1.3B's 2.6 GB of fp16 parameters over 8 x 2, with
  // the first stage's embedding (50,257 x 2,048 x 2 B / 8) on top; not the whole model's.
  CHECK(row["gpu_params_bytes"].get<double>() < 2 * 1.32e9 / 16 + 50257.0 * 2048 * 2 / 8 + 1e7);
  CHECK(row["parallelism"]["tensor"] == 8);
}
