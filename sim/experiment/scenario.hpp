#pragma once
// A scenario: which model, trained how, on which cluster, under which systems.  JSON:
//   {"name": "...", "description": "...",
//    "model": "gpt3-175b" | {inline model, see workloads/model_config.hpp},
//    "training": {"micro_batch": 16, "seq_len": 2048, "grad_accum": 1, "recompute": true,
//                 "memory_efficient_attention": false, "dtype": "fp16"},
//    "parallelism": {"tensor": 8, "pipeline": 16, "sequence_parallel": false, "pipeline_schedule": "1f1b"},
//    "cluster": {"topology": "luwu-star" | "dgx" | "fat-tree", <builder arguments>}
//             | {"topology_file": "path.json"},
//    "systems": ["ddp", {"name": "zero3", "param_fetch": "layer"}, ...],
//    "simulation": {"mode": "auto" | "detailed" | "coarse"},
//    "trace": "workload.json", "kernel_times": "profile.json"}
// "trace" replays a luwusim trace file (`luwusim trace gen`, `trace import-chakra`) instead of
// generating one; the trace carries its model and training settings, so a scenario with "trace"
// has no "model" or "training".  "kernel_times" is a PyTorch profiler (Kineto) trace whose measured
// kernel durations replace the analytic ones by the rule of workloads/kernel_times.hpp.  Both are
// resolved against the scenario file's folder when relative; `luwusim run --trace/--kernel-times`
// set them too.
// "parallelism" (workloads/parallel_layout.hpp; absent: every GPU trains the whole model) lays the
// cluster's GPUs out as tensor x pipeline x data, ranks in Megatron-LM's order (tensor innermost,
// sim/engine/model_parallel_comm.hpp); "data" is derived from the GPU count when left out, and
// must match it when given.  grad_accum is the micro-batches per iteration, the pipeline's too.
// The training systems reduce gradients over each data-parallel group.
// Builder arguments are the fields of topologies/builders.hpp's parameter structs under the same
// names (workers, servers, gpus_per_server, ...), profiles by role ("gpu", "nic", "switch", ...),
// and "network" as a rate with its unit ("100Gb/s").  A relative topology_file is resolved
// against the scenario file's folder.
//
// Profiles of the cluster (any builder; "overrides" also with a topology_file):
//   "profiles":  {"gpu": "a100-40gb-sxm" | {inline profile, the format of models/profiles/*.json}}
//                An inline profile is validated by models::profile_from_json (errors at
//                $.cluster.profiles.<role>...) and known by its "name", which must not be a
//                shipped profile's.
//   "overrides": {"<profile name>": {"<field>": value, ...}, ...}, e.g.
//                {"a100-40gb-sxm": {"collective_interference": 0.3},
//                 "samsung-pm1733": {"write_bandwidth": "7GB/s"}, "tofino": {"aggregation_slots": 1024}}
//                A value is a number with a unit of the field's dimension, a bare number in that
//                dimension's base unit (B, B/s, s, FLOP/s, count, fraction, Hz, pkt/s), or a boolean
//                for a flag (models::override_field).  The profile (shipped or inline) must be one
//                the cluster uses.  Nested by profile so that sweep keys are plain dotted paths:
//                cluster.overrides.a100-40gb-sxm.collective_interference.
// The inline and overridden profiles form a models::ProfileCatalog: passed to the builder, so every
// link and vertex number comes from it, and kept by the topology (Topology::profiles) for
// sim::hardware_of.  Nothing outlives the scenario.
// With a topology_file, the file's links keep their numbers; overrides reach the hardware specs.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/json_input.hpp"
#include "sim/engine/collectives.hpp"
#include "topologies/lowering.hpp"
#include "sim/engine/hardware.hpp"
#include "models/prices.hpp"
#include "sim/systems/system.hpp"
#include "topologies/topology.hpp"
#include "workloads/kernel_times.hpp"
#include "workloads/model_config.hpp"
#include "workloads/parallel_layout.hpp"
#include "workloads/trace.hpp"
#include "workloads/training_config.hpp"

namespace luwu::sim {

enum class ModeChoice { Auto, Detailed, Coarse };
// "auto", "detailed", "coarse": simulation.mode in a scenario, and `luwusim run --mode`.
const luwu::Choices<ModeChoice>& mode_choices();

struct Scenario {
  std::string name;
  std::string description;
  std::string file;
  workloads::ModelConfig model;
  workloads::TrainingConfig training;
  workloads::ParallelLayout layout;  // "parallelism"; data = every GPU without it
  topologies::Topology topology;
  Hardware hardware;  // the topology resolved into typed specs once, at load (sim/engine/hardware.hpp)
  luwu::Json cluster = luwu::Json::object();  // as written, for the record
  std::vector<SystemPtr> systems;
  ModeChoice mode = ModeChoice::Auto;
  topologies::RouteChoice routing = topologies::RouteChoice::EcmpHash;  // simulation.routing
  int flow_splitting = 1;  // simulation.flow_splitting: sub-flows per flow between NICs under ECMP
  // simulation.fold_data_parallel: simulate this many ranks of every data-parallel group, standing
  // for all of them (docs/performance.md, "Folding"); 0, or K at least the group: every rank.
  int fold_data_parallel = 0;
  // simulation.allow_inexact_fold: run a fold that is not exact (fold_inexactness) instead of
  // refusing it; its results are marked not exact.
  bool allow_inexact_fold = false;
  // "prices": a shipped price list's name or a file (default models::kDefaultPriceList); false: none.
  std::optional<models::PriceList> prices;
  bool prices_by_default = false;  // the scenario named no list: `prices` is the default one
  // The workload's sources, when not generated from model and training ("trace", "kernel_times").
  std::shared_ptr<const workloads::Trace> trace;
  std::string trace_file;
  std::shared_ptr<const workloads::KernelProfile> kernel_times;
  // "kernel_times_other_gpu" (`run --allow-other-gpu`): a profile of another GPU is scaled by the
  // two GPUs' peaks (sim/experiment/kernel_profile_check.hpp), not refused.
  bool kernel_times_other_gpu = false;

  // Auto: every ring step a flow up to kDetailedMaxGpus GPUs, coarse beyond (see collectives.hpp).
  static constexpr int kDetailedMaxGpus = 64;
  CollectiveMode collective_mode() const;
};

Scenario scenario_from_json(const luwu::JsonNode& root);
// Replays this trace file: the scenario's model and training become the trace's.
void use_trace(Scenario& scenario, const std::string& file);
// Times kernels by this Kineto profile (one of its profiler steps: workloads/kernel_profile.hpp).
void use_kernel_times(Scenario& scenario, const std::string& file, const workloads::KinetoOptions& options = {});
// Applies the scenario's profile to a trace of it: checked against the scenario's GPU (refused,
// or scaled with kernel_times_other_gpu) and against its peaks (kernel_profile_check.hpp).
workloads::KernelTimesReport apply_scenario_kernel_times(const Scenario& scenario, workloads::Trace& trace);
// The trace the scenario replays: its trace file's, or one generated from its model and training;
// with its kernel times applied (and `report` set) when it has a profile.
workloads::Trace scenario_trace(const Scenario& scenario, std::optional<workloads::KernelTimesReport>* report = nullptr);
// Each pipeline stage's trace under the scenario's layout (one, scenario_trace's, without model
// parallelism); the report is the first stage's.
std::vector<workloads::Trace> scenario_stage_traces(const Scenario& scenario,
                                                   std::optional<workloads::KernelTimesReport>* report = nullptr);
Scenario load_scenario(const std::string& file);

// Builds a topology from a builder name and its JSON arguments (the "cluster" object).
topologies::Topology topology_from_cluster_json(const luwu::JsonNode& cluster, const std::string& scenario_dir);

}  // namespace luwu::sim
