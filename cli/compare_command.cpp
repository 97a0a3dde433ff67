// luwusim compare MEASURED.csv|json: measured iteration times and breakdowns against the
// simulator's predictions for the same scenarios (sim/experiment/compare.hpp).
#include <iostream>
#include <memory>

#include "cli/command_registry.hpp"
#include "sim/experiment/compare.hpp"

namespace {

struct CompareArgs {
  std::string measurements;
  bool json = false;
  bool csv = false;
};

const bool registered = luwu::cli::register_command(
    "compare", "Hold predictions against measured iteration times and breakdowns: an error table", [](CLI::App& app) {
      auto a = std::make_shared<CompareArgs>();
      app.add_option("measurements", a->measurements,
                     "Measurements: CSV (scenario,system,iteration_time_s,...) or JSON {\"measurements\": [...]}")
          ->required();
      auto* json = app.add_flag("--json", a->json, "Print the comparisons as a JSON array (plots/compare_plot.py draws it)");
      app.add_flag("--csv", a->csv, "Print one CSV row per measured value")->excludes(json);
      return [a]() -> int {
        const auto measurements = luwu::sim::load_measurements(a->measurements);
        const auto rows = luwu::sim::compare_with_predictions(
            measurements, [](const std::string& line) { std::cerr << line << std::endl; });
        if (a->json)
          std::cout << luwu::sim::comparisons_to_json(rows).dump(2) << "\n";
        else if (a->csv)
          std::cout << luwu::sim::comparisons_to_csv(rows);
        else
          std::cout << luwu::sim::comparisons_to_table(rows);
        return 0;
      };
    });

}  // namespace
