#include <doctest/doctest.h>

#include "tests/cli/run_command.hpp"

namespace {
const std::string kScenario = std::string(LUWUSIM_SOURCE_DIR) + "/scenarios/small-zero3-vs-ddp.json";
}

// The submission itself runs against a real Slurm in tests/slurm/slurm_sweep_test.sh.
TEST_CASE("sweep --slurm: options that contradict it, or need it, are bad input before anything is submitted") {
  auto r = run_luwusim("sweep " + kScenario + " --set cluster.workers=2,4 -o cli-slurm.jsonl --slurm 2 --resume");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("--slurm shards the sweep") != std::string::npos);
  r = run_luwusim("sweep " + kScenario + " --set cluster.workers=2,4 -o cli-slurm.jsonl --slurm-dir somewhere");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("apply only with --slurm") != std::string::npos);
  r = run_luwusim("sweep " + kScenario + " --set cluster.workers=2,4 -o cli-slurm.jsonl --slurm 0");
  CHECK(r.exit_code == 2);
  // A sweep with a bad point is refused before submission, as without --slurm.
  r = run_luwusim("sweep " + kScenario + " --set training.micro_batch=0 -o cli-slurm.jsonl --slurm 2");
  CHECK(r.exit_code == 2);
  CHECK(r.err.find("micro_batch") != std::string::npos);
}
