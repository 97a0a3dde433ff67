#pragma once
// A sweep on a Slurm cluster: one job array over `luwusim sweep --shard i/n` (each task resumable,
// its results in its own file) and a merge job, dependent on the whole array, that writes the
// results as one file with `luwusim sweep-export`.  The scripts are written to `dir` and
// submitted with sbatch; nothing of the sweep runs here.
#include <string>
#include <vector>

namespace luwu::sim {

struct SlurmSweepPlan {
  std::string luwusim;             // the binary the tasks run (an absolute path)
  std::string input;               // the sweep or scenario file (absolute)
  std::vector<std::string> sets;   // --set options, as given
  std::string output;              // the merged JSON Lines results (absolute)
  std::string csv;                 // and their CSV ("" for none)
  std::string dir;                 // scripts, shard results and logs (absolute)
  int tasks = 1;                   // array tasks, one shard each
  int cpus_per_task = 1;           // each task simulates this many points at once
  std::vector<std::string> sbatch_options;  // more #SBATCH lines, e.g. "--partition=cpu"
};

// The shell scripts (bash), arguments single-quoted.
std::string slurm_array_script(const SlurmSweepPlan& plan);
std::string slurm_merge_script(const SlurmSweepPlan& plan);
// The results file of shard `task`.
std::string slurm_shard_file(const SlurmSweepPlan& plan, int task);

struct SlurmSubmission {
  std::string array_job;
  std::string merge_job;
};

// Writes both scripts into plan.dir (created) and submits them with `sbatch --parsable`;
// std::runtime_error with sbatch's own message when it fails or is not installed.
SlurmSubmission submit_slurm_sweep(const SlurmSweepPlan& plan);

}  // namespace luwu::sim
