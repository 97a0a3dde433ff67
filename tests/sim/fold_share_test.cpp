// The fold share (sim/engine/fold_share.hpp): max-min rates in closed form, and a fold that puts
// the left-out ranks' ring flows back on a fat-tree's shared links, held against the unfolded run.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>

#include "common/json_input.hpp"
#include "sim/engine/fold_share.hpp"
#include "sim/experiment/run_scenario.hpp"
#include "sim/experiment/scenario.hpp"

using namespace luwu;

TEST_CASE("max-min rates by progressive filling: closed forms") {
  // A on link 0, B on links 0 and 1, C on link 1; 10 and 4 B/s.  Link 1 fills first at 2 each
  // (B and C); A takes the rest of link 0: 10 - 2 = 8.
  auto r = sim::max_min_rates({{0}, {0, 1}, {1}}, {10, 4});
  REQUIRE(r.size() == 3);
  CHECK(r[0] == doctest::Approx(8));
  CHECK(r[1] == doctest::Approx(2));
  CHECK(r[2] == doctest::Approx(2));
  // n flows on one link: C / n each; a flow with no link is not limited.
  r = sim::max_min_rates({{0}, {0}, {0}, {}}, {12});
  CHECK(r[0] == doctest::Approx(4));
  CHECK(r[2] == doctest::Approx(4));
  CHECK(std::isinf(r[3]));
  // A chain: link 0 (3) carries A and B, link 1 (10) carries B, C and D.  B is held to 1.5 on
  // link 0 with A; C and D share what link 1 has left, (10 - 1.5) / 2 = 4.25.
  r = sim::max_min_rates({{0}, {0, 1}, {1}, {1}}, {3, 10});
  CHECK(r[0] == doctest::Approx(1.5));
  CHECK(r[1] == doctest::Approx(1.5));
  CHECK(r[2] == doctest::Approx(4.25));
  CHECK(r[3] == doctest::Approx(4.25));
}

namespace {

// `system` (ZeRO-3 unless named) on a 3-tier fat-tree of 16 servers of 8 GPUs (128 GPUs, one NIC
// each), GPT-3 1.3B, or `layout` ({"tensor": T, "pipeline": P}) with the model and training it names.
sim::ScenarioRun run_fat_tree(const std::string& routing, double oversubscription, int fold, const char* mode,
                              const Json& layout = Json::object(), const Json& system = "zero3") {
  Json j = Json::parse(R"({"name": "fold-share", "model": "gpt3-1.3b",
                           "training": {"micro_batch": 1, "seq_len": 2048, "recompute": true}})");
  j["systems"] = Json::array({system});
  if (!layout.empty()) {
    j["parallelism"] = layout;
    j["model"] = "gpt3-2.7b";
    j["training"]["grad_accum"] = 2;
  }
  j["cluster"] = {{"topology", "fat-tree"}, {"servers", 16}, {"gpus_per_server", 8}, {"tiers", 3},
                  {"oversubscription", oversubscription}};
  j["simulation"] = {{"routing", routing}, {"mode", mode}};
  if (fold > 0) {
    j["simulation"]["fold_data_parallel"] = fold;
    if (routing != "spray" || oversubscription != 1) j["simulation"]["allow_inexact_fold"] = true;
  }
  static Json keep;
  keep = j;
  return sim::run_scenario(sim::scenario_from_json(JsonNode(keep, "fold-share.json")), sim::RunOptions{});
}

double iteration_s(const sim::ScenarioRun& run) {
  REQUIRE(run.results.size() == 1);
  REQUIRE(run.results.front().feasible);
  return run.results.front().iteration_time_s;
}

}  // namespace

TEST_CASE("a fold on shared spines puts the left-out ranks' ring flows back: within 1% of every rank simulated") {
  // Measured 2026-11-27 (session 20): ECMP, coarse: folded to 2 servers 0.2657 s, unfolded 0.2664 s
  // (a fold without the load gave the sprayed time, 0.2118 s); one path over 2:1 leaves, detailed:
  // 0.53237 s and 0.53257 s.  The unfolded run's collisions must matter for the check to mean
  // anything: ECMP's unfolded iteration is more than 15% slower than the sprayed one.
  const double ecmp_whole = iteration_s(run_fat_tree("ecmp", 1, 0, "coarse"));
  const double sprayed_whole = iteration_s(run_fat_tree("spray", 1, 0, "coarse"));
  CHECK(ecmp_whole > 1.15 * sprayed_whole);
  const auto folded = run_fat_tree("ecmp", 1, 16, "coarse");
  CHECK(iteration_s(folded) == doctest::Approx(ecmp_whole).epsilon(0.01));
  // Close, not exact by construction (ranks drift apart): still marked, and it says why.
  CHECK(folded.summary.at("folding").at("exact") == false);
  CHECK(folded.summary.at("folding").at("not_exact_because").get<std::string>().find("static share") !=
        std::string::npos);

  const double one_path_whole = iteration_s(run_fat_tree("single-path", 2, 0, "detailed"));
  CHECK(one_path_whole > 1.15 * sprayed_whole);
  CHECK(iteration_s(run_fat_tree("single-path", 2, 16, "detailed")) == doctest::Approx(one_path_whole).epsilon(0.01));
}

TEST_CASE("a fold of a pipelined layout puts every stage's rings back: within 1% of every rank simulated") {
  // Tensor 2 x pipeline 2 x data 32 of GPT-3 2.7B, 2 micro-batches, under ECMP.  Measured 2026-11-27
  // (session 20): folded to 16 data-parallel ranks 0.3981 s, every rank 0.3993 s, sprayed 0.3455 s.
  const Json layout = {{"tensor", 2}, {"pipeline", 2}};
  const double whole = iteration_s(run_fat_tree("ecmp", 1, 0, "coarse", layout));
  CHECK(whole > 1.1 * iteration_s(run_fat_tree("spray", 1, 0, "coarse", layout)));
  CHECK(iteration_s(run_fat_tree("ecmp", 1, 16, "coarse", layout)) == doctest::Approx(whole).epsilon(0.01));
}

TEST_CASE("a fold on a sprayed full-bisection fat-tree runs without asking and agrees within 1% with every rank "
          "simulated: DDP, ZeRO-3, ZeRO-Infinity") {
  // The one fat-tree a fold is exact on (folding_test.cpp): with every flow spread over every spine
  // and no leaf oversubscribed, the left-out ranks' flows make no link a bottleneck.  Measured 2026-11-28 (session 21), coarse,
  // folded to 16 of 128 vs every rank: DDP 0.23530 / 0.23557 s, ZeRO-3 0.21145 / 0.21180 s,
  // ZeRO-Infinity (DRAM) 0.25368 / 0.25450 s.
  for (const Json& system : {Json("ddp"), Json("zero3"), Json{{"name", "zero-infinity"}, {"offload", "dram"}}}) {
    CAPTURE(system.dump());
    const double whole = iteration_s(run_fat_tree("spray", 1, 0, "coarse", Json::object(), system));
    const auto folded = run_fat_tree("spray", 1, 16, "coarse", Json::object(), system);
    CHECK(folded.summary.at("folding").at("exact") == true);
    CHECK(iteration_s(folded) == doctest::Approx(whole).epsilon(0.01));
  }
}

TEST_CASE("a fold on shared spines: ZeRO-Offload's reduces to each owner, whatever the algorithm, agree within 1% "
          "with every rank simulated") {
  // NCCL's Reduce has only the ring, so ZeRO-Offload's per-owner reduces run the world ring or the
  // cross-server rings whatever the algorithm: the pacing hosts of both must exist before the
  // simulation starts (a folded run under "ring" aborted when the cross ones did not, and under
  // the hierarchical default when the world's did not).  Measured 2026-12-02 (session 28), GPT-3
  // 1.3B, hierarchical, folded to 16 of 128 vs every rank: detailed 0.36882 / 0.36732 s, coarse
  // 0.37208 / 0.37078 s.
  for (const Json& system : {Json("zero-offload"), Json{{"name", "zero-offload"}, {"collective_algorithm", "ring"}}}) {
    CAPTURE(system.dump());
    const double whole = iteration_s(run_fat_tree("ecmp", 1, 0, "detailed", Json::object(), system));
    CHECK(iteration_s(run_fat_tree("ecmp", 1, 16, "detailed", Json::object(), system)) ==
          doctest::Approx(whole).epsilon(0.01));
  }
}
