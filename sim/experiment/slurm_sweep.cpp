#include "sim/experiment/slurm_sweep.hpp"

#include <array>
#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <sys/wait.h>

#include <fmt/format.h>

#include "common/atomic_write.hpp"

namespace luwu::sim {
namespace {

// 'text' for bash, with each ' written as '\''.
std::string quoted(const std::string& text) {
  std::string q = "'";
  for (char c : text) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string header(const std::string& name, const std::string& log, const SlurmSweepPlan& plan) {
  std::string s = "#!/bin/bash\n";
  s += "#SBATCH --job-name=" + name + "\n";
  s += "#SBATCH --output=" + log + "\n";
  for (const auto& o : plan.sbatch_options) s += "#SBATCH " + o + "\n";
  return s;
}

// Runs `command` (sh -c) and returns its stdout; runtime_error with its output when it fails.
std::string run_command(const std::string& command) {
  std::string out;
  FILE* pipe = ::popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) throw std::runtime_error("cannot run " + command);
  std::array<char, 4096> buffer;
  std::size_t n;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0) out.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  if (status != 0) {
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    throw std::runtime_error(fmt::format("{} failed ({}): {}", command,
                                         code == 127 ? "sbatch not found: is Slurm installed?" : "exit " + std::to_string(code),
                                         out));
  }
  while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
  return out;
}

// "1234" or "1234;cluster" (sbatch --parsable): the job id.
std::string job_id(const std::string& parsable) { return parsable.substr(0, parsable.find(';')); }

}  // namespace

std::string slurm_shard_file(const SlurmSweepPlan& plan, int task) {
  return plan.dir + "/shard-" + std::to_string(task) + ".jsonl";
}

std::string slurm_array_script(const SlurmSweepPlan& plan) {
  std::string s = header("luwusim-sweep", plan.dir + "/shard-%a.log", plan);
  s += fmt::format("#SBATCH --array=0-{}\n#SBATCH --cpus-per-task={}\n", plan.tasks - 1, plan.cpus_per_task);
  s += "set -euo pipefail\n";
  s += "# Shard i of n of the sweep; --resume: a requeued task goes on where it stopped.\n";
  s += "exec " + quoted(plan.luwusim) + " sweep " + quoted(plan.input);
  for (const auto& set : plan.sets) s += " --set " + quoted(set);
  s += " -o " + quoted(plan.dir + "/shard-") + "\"$SLURM_ARRAY_TASK_ID\"" + quoted(".jsonl");
  s += fmt::format(" --shard \"$SLURM_ARRAY_TASK_ID/{}\" --resume --jobs \"${{SLURM_CPUS_PER_TASK:-{}}}\"\n", plan.tasks,
                   plan.cpus_per_task);
  return s;
}

std::string slurm_merge_script(const SlurmSweepPlan& plan) {
  std::string s = header("luwusim-sweep-merge", plan.dir + "/merge.log", plan);
  s += "set -euo pipefail\n";
  s += "exec " + quoted(plan.luwusim) + " sweep-export";
  for (int t = 0; t < plan.tasks; ++t) {
    s += ' ';  // (appended apart: GCC 12 warns falsely on " " + std::string&&)
    s += quoted(slurm_shard_file(plan, t));
  }
  s += " --jsonl " + quoted(plan.output);
  if (!plan.csv.empty()) s += " --csv " + quoted(plan.csv);
  return s + "\n";
}

SlurmSubmission submit_slurm_sweep(const SlurmSweepPlan& plan) {
  std::filesystem::create_directories(plan.dir);
  const std::string array_script = plan.dir + "/sweep.sbatch", merge_script = plan.dir + "/merge.sbatch";
  write_file_atomically(array_script, slurm_array_script(plan));
  write_file_atomically(merge_script, slurm_merge_script(plan));
  SlurmSubmission s;
  s.array_job = job_id(run_command("sbatch --parsable " + quoted(array_script)));
  // afterok: the merge runs only once every shard finished without error.
  s.merge_job = job_id(run_command("sbatch --parsable --dependency=afterok:" + s.array_job + " " + quoted(merge_script)));
  return s;
}

}  // namespace luwu::sim
