// luwusim sweep BASE.json --set key=v1,v2 ... -o results.jsonl: run the cartesian product of the
// settings, each point in its own process, one JSON line per finished point.
// luwusim sweep-export results.jsonl ... --csv out.csv: the results as one flat CSV (or merged JSONL).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <memory>
#include <set>
#include <unistd.h>

#include <fmt/format.h>

#include "cli/command_registry.hpp"
#include "common/atomic_write.hpp"
#include "sim/experiment/sweep.hpp"
#include "sim/experiment/sweep_results.hpp"
#include "sim/experiment/slurm_sweep.hpp"
#include "sim/experiment/sweep_runner.hpp"

namespace {

struct SweepArgs {
  std::string input;
  std::vector<std::string> sets;
  std::string output;
  int jobs = 0;
  bool resume = false;
  bool overwrite = false;
  std::string shard = "0/1";
  std::string csv;
  bool list = false;
  bool allow_mixed = false;
  int slurm_tasks = 0;
  std::string slurm_dir;
  std::vector<std::string> slurm_options;
};

// --slurm N: the sweep as a Slurm job array of N shards and a merge job (sim/experiment/slurm_sweep.hpp).
int submit_to_slurm(const SweepArgs& a, std::size_t points) {
  namespace fs = std::filesystem;
  luwu::sim::SlurmSweepPlan plan;
  plan.luwusim = fs::read_symlink("/proc/self/exe").string();
  plan.input = fs::absolute(a.input).string();
  plan.sets = a.sets;
  plan.output = fs::absolute(a.output).string();
  if (!a.csv.empty()) plan.csv = fs::absolute(a.csv).string();
  plan.dir = fs::absolute(a.slurm_dir.empty() ? a.output + ".slurm" : a.slurm_dir).string();
  plan.tasks = static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(a.slurm_tasks), points));
  plan.cpus_per_task = a.jobs > 0 ? a.jobs : 1;
  plan.sbatch_options = a.slurm_options;
  const auto submitted = luwu::sim::submit_slurm_sweep(plan);
  std::cout << fmt::format("submitted job array {} ({} shards of {} points) and merge job {}; results in {}{}\n",
                           submitted.array_job, plan.tasks, points, submitted.merge_job, plan.output,
                           plan.csv.empty() ? "" : " and " + plan.csv);
  std::cerr << fmt::format("sweep: scripts and logs in {}\n", plan.dir);
  return 0;
}

std::string clock_text(double seconds) {
  const long s = static_cast<long>(seconds + 0.5);
  return s >= 3600 ? fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60) : fmt::format("{}:{:02}", s / 60, s % 60);
}

// "[#####.....] 5/10 points, 1 failed, 2 running, 0:12 elapsed, ETA 0:12".  Redrawn in place on
// a terminal; in a log, one line per finished point.
std::function<void(const luwu::sim::SweepProgress&)> progress_bar() {
  const bool tty = ::isatty(2);
  auto last_done = std::make_shared<int>(-1);
  return [tty, last_done](const luwu::sim::SweepProgress& p) {
    if (!tty && p.done == *last_done) return;
    *last_done = p.done;
    const int width = 30;
    const int filled = p.total > 0 ? width * p.done / p.total : width;
    std::string eta = p.done > 0 && p.done < p.total
                          ? "ETA " + clock_text(p.elapsed_s / p.done * (p.total - p.done))
                          : (p.done == p.total ? "done" : "ETA ?");
    std::string line = fmt::format("[{}{}] {}/{} points, {} failed, {} running, {} elapsed, {}", std::string(filled, '#'),
                                   std::string(width - filled, '.'), p.done, p.total, p.failed, p.running,
                                   clock_text(p.elapsed_s), eta);
    if (tty) std::cerr << "\r" << line << "\033[K" << (p.done == p.total && p.running == 0 ? "\n" : "") << std::flush;
    else std::cerr << "sweep: " << line << "\n";
  };
}

const bool registered_sweep = luwu::cli::register_command(
    "sweep", "Run the cartesian product of scenario settings in parallel processes, one JSON line per point",
    [](CLI::App& app) {
      auto a = std::make_shared<SweepArgs>();
      app.add_option("input", a->input, "A scenario JSON (with --set) or a sweep file {\"base\", \"axes\"}")->required();
      app.add_option("--set", a->sets,
                     "An axis: key=v1,v2,... with a dotted key into the scenario (cluster.workers=4,8); repeatable")
          ->allow_extra_args(false);
      app.add_option("-o,--output", a->output, "Results file (JSON Lines, one line per finished point)");
      app.add_option("-j,--jobs", a->jobs, "Points simulated at once (default: the number of CPUs)")
          ->check(CLI::NonNegativeNumber);
      app.add_flag("--resume", a->resume, "Keep the results already in the output file and run only the missing points");
      app.add_flag("--overwrite", a->overwrite, "Empty the output file first");
      app.add_option("--shard", a->shard, "Run only the points whose index mod n is i (i/n, e.g. 0/2)");
      app.add_option("--csv", a->csv, "Afterwards, write every result of the output file as CSV here");
      app.add_flag("--list", a->list, "Print the points (index, id, settings) as JSON lines and run nothing");
      app.add_flag("--allow-mixed", a->allow_mixed,
                   "With --resume, keep results of another sweep (other base or axes) found in the output file");
      app.add_option("--slurm", a->slurm_tasks,
                     "Submit to Slurm instead: a job array of this many shards (--jobs points at once in each) "
                     "and a merge job into --output (and --csv)")
          ->check(CLI::PositiveNumber);
      app.add_option("--slurm-dir", a->slurm_dir, "With --slurm: where scripts, shard results and logs go (default OUTPUT.slurm)");
      app.add_option("--slurm-option", a->slurm_options,
                     "With --slurm: an sbatch option for both jobs, e.g. --slurm-option=--partition=cpu (repeatable)");
      return [a]() -> int {
        auto sweep = luwu::sim::load_sweep_definition(a->input);
        std::set<std::string> set_keys;  // a second --set of a key would silently replace the first
        for (const auto& s : a->sets) {
          auto axis = luwu::sim::parse_set_option(s);
          if (!set_keys.insert(axis.key).second)
            throw std::invalid_argument("--set " + axis.key + " is given more than once; give all its values in one --set " +
                                        axis.key + "=v1,v2,...");
          luwu::sim::set_axis(sweep, std::move(axis));
        }
        if (!a->sets.empty() && sweep.origin == a->input && sweep.axes.size() == a->sets.size())
          sweep.origin = a->input + " --set";
        const auto shard = luwu::sim::parse_shard(a->shard);
        auto points = luwu::sim::expand_sweep(sweep);
        luwu::sim::validate_sweep(sweep, points);
        if (a->list) {
          for (const auto& p : points)
            if (shard.contains(p.index))
              std::cout << "{\"index\":" << p.index << ",\"id\":\"" << p.id
                        << "\",\"point\":" << luwu::sim::settings_json_text(p) << "}\n";
          return 0;
        }
        if (a->output.empty()) throw std::invalid_argument("--output FILE is required to run a sweep");
        if (a->slurm_tasks > 0) {
          if (a->resume || a->overwrite || a->shard != "0/1")
            throw std::invalid_argument("--slurm shards the sweep and resumes each shard itself: drop --resume, "
                                        "--overwrite and --shard");
          return submit_to_slurm(*a, points.size());
        }
        if (!a->slurm_dir.empty() || !a->slurm_options.empty())
          throw std::invalid_argument("--slurm-dir and --slurm-option apply only with --slurm N");

        luwu::sim::SweepRunOptions options;
        options.output = a->output;
        options.jobs = a->jobs;
        options.resume = a->resume;
        options.overwrite = a->overwrite;
        options.allow_mixed = a->allow_mixed;
        options.shard = shard;
        options.progress = progress_bar();
        options.warn = [](const std::string& line) { std::cerr << "warning: " << line << "\n"; };
        const auto jobs = a->jobs > 0 ? a->jobs : luwu::sim::default_jobs();
        std::cerr << fmt::format("sweep: {} points, {} in shard {}/{}, {} processes at once\n", points.size(),
                                 (points.size() + shard.count - 1 - shard.index) / shard.count, shard.index,
                                 shard.count, jobs);
        const auto summary = luwu::sim::run_sweep(sweep, points, options);
        if (summary.already_done > 0)
          std::cerr << fmt::format("sweep: {} points were already in {}\n", summary.already_done, a->output);
        if (summary.interrupted_by != 0) {
          if (::isatty(2)) std::cerr << "\n";  // below the progress bar
          std::cerr << fmt::format("sweep: stopped by signal {}; {} points finished and kept in {}; run again with "
                                   "--resume to finish\n",
                                   summary.interrupted_by, summary.ran, a->output);
          return 128 + summary.interrupted_by;
        }
        if (!a->csv.empty())
          luwu::write_file_atomically(a->csv, luwu::sim::sweep_results_to_csv(luwu::sim::merge_sweep_results({a->output}, a->allow_mixed)));
        std::cerr << fmt::format("sweep: {} points simulated, {} failed; results in {}\n", summary.ran, summary.failed,
                                 a->output);
        return summary.failed > 0 ? 1 : 0;
      };
    });

struct ExportArgs {
  std::vector<std::string> inputs;
  std::string csv;
  std::string jsonl;
  bool allow_mixed = false;
};

const bool registered_export = luwu::cli::register_command(
    "sweep-export", "Merge sweep results (shards, resumed runs) sorted by point, as CSV or JSON Lines",
    [](CLI::App& app) {
      auto a = std::make_shared<ExportArgs>();
      app.add_option("results", a->inputs, "Results files (JSON Lines) written by luwusim sweep")->required();
      auto* csv_option =
          app.add_option("--csv", a->csv, "Write one row per point and system to this file (no file or -: stdout)")
              ->expected(0, 1);
      app.add_option("--jsonl", a->jsonl, "Write the merged lines here, one per point, sorted by index");
      app.add_flag("--allow-mixed", a->allow_mixed,
                   "Merge results of different sweeps (other base or axes) too; refused otherwise");
      return [a, csv_option]() -> int {
        const auto lines = luwu::sim::merge_sweep_results(a->inputs, a->allow_mixed);
        if (!a->jsonl.empty()) luwu::write_file_atomically(a->jsonl, luwu::sim::sweep_lines_to_jsonl(lines));
        // CSV to stdout unless only merged JSONL was asked for.
        const bool want_csv = csv_option->count() > 0 || a->jsonl.empty();
        const std::string csv = !want_csv ? "" : (a->csv.empty() ? "-" : a->csv);
        if (csv == "-") std::cout << luwu::sim::sweep_results_to_csv(lines);
        else if (!csv.empty()) luwu::write_file_atomically(csv, luwu::sim::sweep_results_to_csv(lines));
        return 0;
      };
    });

}  // namespace
