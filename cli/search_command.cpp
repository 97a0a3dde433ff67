// luwusim search SCENARIO.json [--tensor 1,8] [--pipeline 1,2,4] [--micro-batch 1,2,4] [--recompute both]
//                [--system luwu] [-j N]:
// the fastest configurations of the scenario's model on its cluster, with their breakdowns
// (sim/experiment/config_search.hpp).
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <iostream>
#include <memory>
#include <unistd.h>

#include <fmt/format.h>

#include "cli/command_registry.hpp"
#include "common/atomic_write.hpp"
#include "sim/experiment/config_search.hpp"
#include "sim/experiment/sweep.hpp"

namespace {

struct SearchArgs {
  std::string scenario;
  std::vector<int> micro_batches, tensor, pipeline;
  std::string recompute = "both";
  std::vector<std::string> systems;
  int jobs = 0;
  int top = 5;
  std::string output;
  bool json = false;
};

const bool registered = luwu::cli::register_command(
    "search", "Find the fastest configurations (system x tensor x pipeline x micro-batch x recompute) of a scenario's model "
    "on its cluster",
    [](CLI::App& app) {
      auto a = std::make_shared<SearchArgs>();
      app.add_option("scenario", a->scenario, "A scenario JSON: its model, cluster and systems")->required();
      app.add_option("--tensor", a->tensor,
                     "Tensor-parallel degrees to try (default: the scenario's layout, data parallelism only without one)")
          ->delimiter(',')
          ->check(CLI::PositiveNumber);
      app.add_option("--pipeline", a->pipeline, "Pipeline-parallel degrees to try (default: as --tensor)")
          ->delimiter(',')
          ->check(CLI::PositiveNumber);
      app.add_option("--micro-batch", a->micro_batches, "Micro-batch sizes to try (default 1,2,4,...,64)")
          ->delimiter(',')
          ->check(CLI::PositiveNumber);
      app.add_option("--recompute", a->recompute, "Activation recomputation: on, off or both")
          ->check(CLI::IsMember({"on", "off", "both"}))
          ->capture_default_str();
      app.add_option("--system", a->systems, "Only these systems of the scenario (a label or a kind; repeatable)");
      app.add_option("-j,--jobs", a->jobs, "Candidates simulated at once (default: the number of CPUs)")
          ->check(CLI::NonNegativeNumber);
      app.add_option("--top", a->top, "How many of the best to print")->check(CLI::PositiveNumber)->capture_default_str();
      app.add_option("-o,--output", a->output, "Keep the simulated candidates here (JSON Lines, as luwusim sweep writes)");
      app.add_flag("--json", a->json, "Print {\"best\": [...], \"candidates\": [...]} as JSON");
      return [a]() -> int {
        const auto scenario = luwu::sim::load_sweep_definition(a->scenario);
        if (!scenario.axes.empty())
          throw std::invalid_argument(a->scenario + " is a sweep file; the search takes a scenario");
        luwu::sim::SearchSpace space;
        if (!a->micro_batches.empty()) space.micro_batches = a->micro_batches;
        if (!a->tensor.empty()) space.tensor = a->tensor;
        if (!a->pipeline.empty()) space.pipeline = a->pipeline;
        if (a->recompute != "both") space.recompute = {a->recompute == "on"};
        space.only_systems = a->systems;
        luwu::sim::SearchOptions options;
        options.jobs = a->jobs;
        options.say = [](const std::string& line) { std::cerr << line << "\n"; };
        // Without -o the simulated points go to a scratch folder of its own (mkdtemp: a fresh name,
        // created exclusively, so nothing planted in the temporary folder is appended to), removed
        // afterwards.
        std::string scratch;
        if (a->output.empty()) {
          std::string folder = (std::filesystem::temp_directory_path() / "luwusim-search-XXXXXX").string();
          if (::mkdtemp(folder.data()) == nullptr)
            throw std::runtime_error("cannot create a scratch folder in " + std::filesystem::temp_directory_path().string());
          scratch = folder;
          options.output = (std::filesystem::path(folder) / "candidates.jsonl").string();
        } else {
          luwu::require_writable_output(a->output);  // before any simulation
          options.output = a->output;
        }
        struct RemoveScratch {
          std::string folder;
          ~RemoveScratch() {
            std::error_code ec;
            if (!folder.empty()) std::filesystem::remove_all(folder, ec);
          }
        } remove_scratch{scratch};
        const auto outcome = luwu::sim::search_configurations(scenario, space, options);
        if (a->json)
          std::cout << luwu::sim::search_to_json(outcome, a->top).dump(2) << "\n";
        else
          std::cout << luwu::sim::search_report(outcome, a->top);
        return 0;
      };
    });

}  // namespace
