// luwusim run SCENARIO.json: simulate the scenario's systems and report the iteration time of each,
// with its breakdown.
#include <iostream>
#include <memory>
#include <optional>

#include "cli/command_registry.hpp"
#include "common/atomic_write.hpp"
#include "sim/experiment/run_scenario.hpp"
#include "sim/experiment/sweep_runner.hpp"

namespace {

struct RunArgs {
  std::string scenario;
  std::vector<std::string> systems;
  bool json = false;
  bool csv = false;
  std::string timeline;
  std::size_t timeline_counter_points = luwu::sim::kDefaultTimelineCounterPoints;
  std::string mode;
  std::string trace;
  std::string kernel_times;
  int kernel_times_step = -1;
  bool allow_other_gpu = false;
  bool force = false;
  double max_detailed_flows = static_cast<double>(luwu::sim::kMaxDetailedFlows);
  int jobs = 0;
};

const bool registered = luwu::cli::register_command(
    "run", "Simulate one training iteration of a scenario under each of its systems", [](CLI::App& app) {
      auto a = std::make_shared<RunArgs>();
      app.add_option("scenario", a->scenario, "Scenario JSON file")->required();
      app.add_option("--system", a->systems, "Only these systems (repeatable; a label or a kind such as zero3)");
      auto* json = app.add_flag("--json", a->json, "Print {\"scenario\": ..., \"results\": [...]} as JSON");
      app.add_flag("--csv", a->csv, "Print one CSV row per system")->excludes(json);
      app.add_option("--timeline", a->timeline,
                     "Write a Chrome trace-event JSON of the iteration (Perfetto): spans with their bytes, FLOPs "
                     "and rates, and each link's and SSD's utilization as counter tracks (docs/timeline.md)");
      app.add_option("--timeline-counter-points", a->timeline_counter_points,
                     "At most this many points per counter track (link, SSD direction) in the --timeline "
                     "(averaged over equal time bins beyond; 0: no counter tracks)")
          ->check(CLI::Range(std::size_t{0}, std::size_t{10'000'000}))
          ->capture_default_str();
      app.add_option("--mode", a->mode,
                     "Collective simulation mode, overriding the scenario's: auto, detailed or coarse");
      app.add_option("--trace", a->trace,
                     "Replay this luwusim trace file (trace gen, trace import-chakra) instead of generating one; "
                     "its model and training settings replace the scenario's");
      app.add_option("--kernel-times", a->kernel_times,
                     "A PyTorch profiler (Kineto) trace: its measured kernel durations replace the analytic ones "
                     "(docs/traces.md gives the matching rule)");
      app.add_option("--kernel-times-step", a->kernel_times_step,
                     "Of a profile of several steps, the ProfilerStep# to use (default: the median step)")
          ->check(CLI::NonNegativeNumber);
      app.add_flag("--allow-other-gpu", a->allow_other_gpu,
                   "Accept a kernel-times profile of another GPU than the scenario's, its times scaled by the two "
                   "GPUs' peaks (refused otherwise)");
      app.add_flag("--force", a->force,
                   "Simulate detailed collectives even past the flow budget (run refuses a detailed scenario "
                   "estimated past it, and names coarse mode's estimate)");
      app.add_option("--max-detailed-flows", a->max_detailed_flows,
                     "The flow budget of detailed collectives: run refuses a scenario in detailed mode whose "
                     "estimated flows exceed it (unless --force)")
          ->check(CLI::PositiveNumber)
          ->capture_default_str();
      app.add_option("-j,--jobs", a->jobs,
                     "Systems simulated at once, each in its own process (default: the number of CPUs); the "
                     "results do not depend on it, the memory used adds up")
          ->check(CLI::PositiveNumber);
      return [a]() -> int {
        std::optional<luwu::sim::ModeChoice> mode;  // checked before the scenario is read
        if (!a->mode.empty()) mode = luwu::choose(a->mode, luwu::sim::mode_choices(), "--mode");
        if (!a->timeline.empty()) luwu::require_writable_output(a->timeline);  // before any simulation
        auto scenario = luwu::sim::load_scenario(a->scenario);
        if (mode) scenario.mode = *mode;
        if (!a->trace.empty()) {
          luwu::sim::use_trace(scenario, a->trace);
          std::cerr << "workload: " << a->trace << " (" << scenario.model.name << ", micro-batch "
                    << scenario.training.micro_batch << ", sequence " << scenario.training.seq_len
                    << "), in place of the scenario's model and training" << std::endl;
        }
        luwu::workloads::KinetoOptions kineto;
        kineto.step = a->kernel_times_step;
        if (a->allow_other_gpu) scenario.kernel_times_other_gpu = true;
        if (!a->kernel_times.empty()) {
          luwu::sim::use_kernel_times(scenario, a->kernel_times, kineto);
        } else if (a->kernel_times_step >= 0) {
          if (!scenario.kernel_times) throw std::invalid_argument("--kernel-times-step: the scenario has no kernel-times profile");
          luwu::sim::use_kernel_times(scenario, scenario.kernel_times->file, kineto);
        }
        if ((a->allow_other_gpu) && !scenario.kernel_times)
          throw std::invalid_argument("--allow-other-gpu: the scenario has no kernel-times profile (--kernel-times)");
        luwu::sim::RunOptions options;
        options.only_systems = a->systems;
        options.record_timeline = !a->timeline.empty();
        options.timeline_counter_points = a->timeline_counter_points;
        options.progress = [](const std::string& line) { std::cerr << line << std::endl; };
        options.force = a->force;
        options.max_detailed_flows = a->max_detailed_flows;
        options.jobs = a->jobs > 0 ? a->jobs : luwu::sim::default_jobs();
        auto run = luwu::sim::run_scenario(scenario, options);
        if (!a->timeline.empty()) luwu::write_file_atomically(a->timeline, luwu::sim::merged_timeline(run).dump());
        if (a->json)
          std::cout << luwu::sim::run_to_json(run).dump(2) << "\n";
        else if (a->csv)
          std::cout << luwu::sim::run_to_csv(run);
        else
          std::cout << luwu::sim::run_to_table(run);
        return 0;
      };
    });

}  // namespace
