#include "sim/experiment/simulate.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Link.hpp>

#include "models/gpu.hpp"
#include "sim/engine/cluster_roles.hpp"
#include "sim/engine/data_parallel_collectives.hpp"
#include "sim/engine/engine_config.hpp"
#include "sim/engine/model_parallel_comm.hpp"
#include "sim/experiment/isolated_run.hpp"
#include "sim/experiment/spine_utilization.hpp"
#include "sim/experiment/stage_fit.hpp"
#include "sim/systems/schedule.hpp"
#include "topologies/lowering.hpp"

namespace luwu::sim {
namespace {

// One data-parallel group of a layout: the GPUs of one pipeline stage and one tensor-parallel
// index, with the training system's schedule over them (the whole cluster without tensor or
// pipeline parallelism).
struct DataParallelSlice {
  ClusterRoles roles;
  std::unique_ptr<DataParallelCollectives> collectives;
  std::unique_ptr<ClusterEnv> cluster;
  std::unique_ptr<Schedule> schedule;
};

// The rate NCCL's kernels reach through host memory when this rank's collectives go that way
// (CollectiveSettings::gpu_direct_rdma), 0 when they go GPUDirect.
double nccl_host_staged_Bps(const CollectiveSettings& settings, const topologies::Topology& topo, const RankHosts& rank,
                            const Hardware& hardware) {
  if (settings.gpu_direct_rdma == GpuDirectRdma::On || rank.nic == nullptr) return 0;
  if (settings.gpu_direct_rdma == GpuDirectRdma::Auto &&
      topo.reaches_over_pcie_switches(topo.vertex(rank.gpu->get_name()), topo.vertex(rank.nic->get_name())))
    return 0;
  const double staged = hardware.worker_host.nccl_host_staged_Bps;
  if (staged > 0) return staged;
  if (settings.gpu_direct_rdma == GpuDirectRdma::Off)
    throw std::invalid_argument("gpu_direct_rdma \"off\": the worker host profile \"" + hardware.worker_host.name +
                                "\" gives no nccl_host_staged_bandwidth, the rate of NCCL's path through host memory");
  return 0;  // auto, through the host, rate unknown: the route's own links limit it
}

// Runs inside the simulation process: the engine, the platform, one actor per rank.
// `simulated_data`: the data-parallel ranks of every group simulated (layout.data unfolded).

luwu::Json simulate_in_this_process(const ParallelWorkload& workload, const topologies::Topology& topo,
                                    const Hardware& hardware, const System& system,
                                    const SimulationOptions& options, int simulated_data) {
  const models::GpuSpec& gpu_spec = hardware.gpu;
  const workloads::ParallelLayout& layout = workload.layout;
  auto engine = make_engine();
  topologies::LoweringOptions lowering;
  lowering.route_choice = options.routing;
  lowering.flow_splitting = static_cast<std::size_t>(std::max(1, options.flow_splitting));
  auto platform = topologies::lower_to_simgrid(topo, *engine, lowering);

  const ClusterRoles roles = roles_of(topo, platform);
  const bool model_parallel = !layout.whole_model_per_gpu();
  const bool folded = simulated_data < layout.data;
  // The ranks simulated: every GPU's, or, folded, those of the first data-parallel indexes.
  std::vector<int> simulated;
  for (int r = 0; r < roles.world(); ++r)
    if (parallel_coords(layout, r).data < simulated_data) simulated.push_back(r);
  const int world = static_cast<int>(simulated.size());

  Timeline timeline(options.record_timeline);
  TrafficMeter traffic;
  traffic.attach_timeline(&timeline);  // only an enabled one: otherwise the meter records as before
  const CollectiveSettings collective_settings = system.collectives();
  std::vector<std::unique_ptr<GpuDevice>> gpus(static_cast<std::size_t>(roles.world()));  // by cluster rank
  for (int r : simulated) {
    // The system sees a GPU by its rank in its data-parallel group.
    gpus[r] = std::make_unique<GpuDevice>(parallel_coords(layout, r).data, roles.ranks[r].gpu, gpu_spec, &timeline,
                                          collective_settings.sm_sharing, hardware.worker_nic.goodput_Bps(),
                                          nccl_host_staged_Bps(collective_settings, topo, roles.ranks[r], hardware));
    if (model_parallel) gpus[r]->rename("gpu" + std::to_string(r));
    gpus[r]->set_kernel_launch_host_time(hardware.worker_host.eager_kernel_launch_s);
  }
  CollectiveContext context{options.mode, &traffic, {}};
  if (hardware.nvlink)  // NCCL's ring on the servers' NVLink, where the profile gives its measurement
    context.intra_server = NcclRingCost::on(*hardware.nvlink);
  const std::vector<Hardware> stage_hw = stage_hardware(workload, hardware, roles.optimizer_nodes.size());
  // The represented groups whose rings load shared links (SimulationOptions::fold_shares_links): every
  // stage's and tensor slice's, taken to run at once (1F1B's steady state keeps every stage busy).
  std::shared_ptr<FoldLoad> fold_load;
  if (folded && options.fold_shares_links && system.fold_loads_rings()) {
    std::vector<FoldLoad::Group> groups;
    for (int p = 0; p < layout.pipeline; ++p)
      for (int t = 0; t < layout.tensor; ++t) {
        FoldLoad::Group g;
        for (int d = 0; d < layout.data; ++d) {
          const RankHosts& rank = roles.ranks[static_cast<std::size_t>(parallel_rank(layout, {t, d, p}))];
          g.hosts.push_back(rank.gpu);
          g.servers.push_back(rank.server);
        }
        groups.push_back(std::move(g));
      }
    fold_load = std::make_shared<FoldLoad>(std::move(groups));
  }
  std::vector<std::unique_ptr<DataParallelSlice>> slices;  // by stage, then tensor index
  for (int p = 0; p < layout.pipeline; ++p)
    for (int t = 0; t < layout.tensor; ++t) {
      auto slice = std::make_unique<DataParallelSlice>();
      slice->roles = roles;
      slice->roles.ranks.clear();
      // Stage p's optimizer node (luwu-star's optimizer_nodes: node p mod their number).
      if (!roles.optimizer_nodes.empty()) {
        const std::size_t node = static_cast<std::size_t>(p) % roles.optimizer_nodes.size();
        slice->roles.optimizer_node = roles.optimizer_nodes[node];
        slice->roles.optimizer_ssds = roles.optimizer_node_ssds[node];
      }
      std::vector<simgrid::s4u::Host*> slice_engines;
      for (int d = 0; d < simulated_data; ++d) {
        const int r = parallel_rank(layout, {t, d, p});
        slice->roles.ranks.push_back(roles.ranks[r]);
        slice_engines.push_back(gpus[r]->collective_engine());
      }
      slice->collectives = std::make_unique<DataParallelCollectives>(
          slice->roles.gpu_hosts(), slice->roles.servers(), collective_settings.algorithm, context, slice_engines,
          hardware.network_switch ? roles.network_switch : nullptr);
      if (folded) slice->collectives->represent(layout.data, fold_load);
      if (model_parallel) slice->collectives->set_group_prefix(fmt::format("p{}t{}/", p, t));
      slice->cluster = std::make_unique<ClusterEnv>(ClusterEnv{*workload.stages[static_cast<std::size_t>(p)], stage_hw[static_cast<std::size_t>(p)],
                                                               slice->roles, *slice->collectives, traffic, timeline, {}});
      for (int d = 0; d < simulated_data; ++d) slice->cluster->gpus.push_back(gpus[parallel_rank(layout, {t, d, p})].get());
      slice->schedule = system.make_schedule(*slice->cluster);
      slices.push_back(std::move(slice));
    }
  std::optional<ModelParallelComm> model_parallel_comm;
  if (model_parallel) model_parallel_comm.emplace(layout, roles.gpu_hosts(), roles.servers(), context);

  for (int r : simulated) {
    const ParallelCoords c = parallel_coords(layout, r);
    DataParallelSlice& slice = *slices[static_cast<std::size_t>(c.stage * layout.tensor + c.tensor)];
    simgrid::s4u::Actor::create("rank" + std::to_string(r), roles.ranks[r].gpu, [&, r, c] {
      RankEnv env{*slice.cluster, *gpus[r], slice.roles.ranks[static_cast<std::size_t>(c.data)],
                  model_parallel_comm ? &*model_parallel_comm : nullptr, r};
      slice.schedule->run_rank(env);
      gpus[r]->times().finish_s = simgrid::s4u::Engine::get_clock();
      gpus[r]->times().finished = true;
    });
  }
  engine->run();

  SystemResult result;
  result.system = system.label();
  result.workers = roles.world();
  for (int r : simulated) {
    const auto& g = gpus[r];
    // A rank that never finished means some activity never ends (SimGrid reports a deadlock): say
    // so, rather than return a time that is not one.
    if (!g->times().finished)
      throw std::runtime_error(fmt::format(
          "rank {} never finished its iteration (the engine found nothing left that could progress at {:.6g} s): "
          "an input gives some transfer or kernel no end; check the cluster's rates and latencies",
          g->rank(), simgrid::s4u::Engine::get_clock()));
    result.iteration_time_s = std::max(result.iteration_time_s, g->times().finish_s);
  }
  if (!std::isfinite(result.iteration_time_s))
    throw std::runtime_error(fmt::format("the iteration time came out as {}: check the cluster's rates and latencies",
                                         result.iteration_time_s));
  const double t = result.iteration_time_s;
  for (int r : simulated) {
    const RankTimes& rt = gpus[r]->times();
    result.breakdown.compute_s += rt.compute_s / world;
    result.breakdown.exposed_communication_s += rt.communication_wait_s / world;
    result.breakdown.exposed_optimizer_s += rt.optimizer_s / world;
    result.breakdown.io_stall_s += rt.io_wait_s / world;
    result.breakdown.host_launch_s += rt.host_launch_wait_s / world;
    result.contention.compute_stretch_s += (rt.compute_s - rt.undisturbed_compute_s) / world;
    result.contention.collective_launch_wait_s += rt.collective_launch_wait_s / world;
    if (model_parallel) {
      if (!result.model_parallel) result.model_parallel.emplace();
      result.model_parallel->tensor_collectives_s += rt.tensor_collective_s / world;
      result.model_parallel->pipeline_waits_s += rt.pipeline_wait_s / world;
      result.model_parallel->expert_all_to_all_s += rt.expert_all_to_all_s / world;
    }
    // Idle is what the accounted parts leave; rounding can leave a negative crumb.
    double idle = t - rt.compute_s - rt.communication_wait_s - rt.optimizer_s - rt.io_wait_s - rt.host_launch_wait_s;
    result.breakdown.idle_s += (idle > 1e-9 * t ? idle : 0.0) / world;
    result.simulated_kernels += rt.kernels;
  }
  // Rounding leaves a crumb of stretch where nothing ran beside the kernels.
  if (std::abs(result.contention.compute_stretch_s) <= 1e-9 * t) result.contention.compute_stretch_s = 0;
  result.simulated_flows = traffic.flows();
  result.storage_bytes = traffic.resource_bytes();
  // Network traffic is what crosses the links between the workers' NICs and their switches (a NIC
  // shared by several GPUs counts once); PCIe, NVLink and NVMe traffic is not network traffic.
  std::set<topologies::Vertex> nics;
  const auto gpu_vertices = topo.gpus();
  for (int r : simulated) nics.insert(topo.nic_of(gpu_vertices[static_cast<std::size_t>(r)]));
  for (auto nic : nics) {
    auto sw = topo.switch_of(nic);
    if (!sw) continue;
    auto [edge, found] = boost::edge(nic, *sw, topo.graph);
    if (!found) continue;
    result.sent_bytes_per_worker += traffic.bytes_on(platform.directed_link(topo, edge, nic)) / world;
    result.received_bytes_per_worker += traffic.bytes_on(platform.directed_link(topo, edge, *sw)) / world;
  }
  // Every stage's GPUs process the same tokens; the FLOPs are each GPU's, averaged over the stages.
  const workloads::Trace& first_stage = *workload.stages.front();
  result.tokens_per_s = first_stage.tokens_per_iteration() * layout.data / t;
  double flops = 0, model_flops = 0;
  for (const auto* stage : workload.stages) {
    flops += stage->flops_per_iteration();
    model_flops += stage->model_flops();
  }
  flops /= layout.pipeline;
  model_flops /= layout.pipeline;
  result.tflops_per_gpu = flops / t / 1e12;
  result.mfu = model_flops / (t * gpu_spec.peak_flops(precision_of(first_stage.training.dtype)));
  for (const auto& [name, bytes] : traffic.link_bytes_by_name()) {
    double bw = simgrid::s4u::Link::by_name(name)->get_bandwidth();
    result.links.push_back({name, bytes, bw, bytes / (bw * t)});
  }
  result.spines = spine_use(topo, platform, traffic, t);
  // A system's own report describes its data-parallel group; with several (model parallelism),
  // the first stage's first group's.
  result.details = slices.front()->schedule->details(t);
  luwu::Json j = result_to_json(result);
  if (options.record_timeline) {
    if (options.timeline_counter_points > 0) {
      for (auto& track : traffic.link_counters(options.timeline_counter_points)) timeline.add_counter(std::move(track));
      for (auto& track : traffic.disk_counters(options.timeline_counter_points)) timeline.add_counter(std::move(track));
    }
    j["timeline"] = timeline.to_chrome_trace();
  }
  return j;
}

}  // namespace

// A group's share of its node's DRAM and SSDs is its stage's parameters over all the node serves;
// one node per group leaves the share at 1.
std::vector<Hardware> stage_hardware(const ParallelWorkload& workload, const Hardware& hardware, std::size_t nodes) {
  std::vector<Hardware> out(workload.stages.size(), hardware);
  if (nodes == 0) return out;
  std::vector<double> served(nodes, 0.0);
  for (std::size_t p = 0; p < workload.stages.size(); ++p)
    served[p % nodes] += static_cast<double>(workload.stages[p]->total_params()) * workload.layout.tensor;
  for (std::size_t p = 0; p < workload.stages.size(); ++p) {
    const double params = static_cast<double>(workload.stages[p]->total_params());
    if (params > 0 && params != served[p % nodes]) out[p].optimizer_node_share = params / served[p % nodes];
  }
  return out;
}

SystemResult simulate_system(const workloads::Trace& trace, const topologies::Topology& topology,
                             const Hardware& hardware, const System& system,
                             const SimulationOptions& options) {
  ParallelWorkload workload;
  workload.layout.data = static_cast<int>(topology.gpus().size());
  workload.stages = {&trace};
  return simulate_parallel_system(workload, topology, hardware, system, options);
}

namespace {

// A fold's simulated ranks, as the topology places them, checked (fold_problem) before a child
// builds the platform (on a large cluster, minutes).
void check_fold_spans_servers(const topologies::Topology& topology, const workloads::ParallelLayout& layout,
                              int simulated_data) {
  std::map<int, int> ranks_per_server;
  const auto gpus = topology.gpus();
  for (int d = 0; d < simulated_data; ++d) ++ranks_per_server[topology[gpus[parallel_rank(layout, {0, d, 0})]].server];
  if (const std::string why = fold_problem(ranks_per_server, layout.data); !why.empty())
    throw std::invalid_argument(fmt::format("simulation.fold_data_parallel {}: {}", simulated_data, why));
}

}  // namespace

SystemSimulation start_parallel_system(const ParallelWorkload& workload, const topologies::Topology& topology,
                                       const Hardware& hardware, const System& system,
                                       const SimulationOptions& options) {
  const int world = static_cast<int>(topology.gpus().size());
  const workloads::ParallelLayout& layout = workload.layout;
  if (layout.gpus() != world || static_cast<int>(workload.stages.size()) != layout.pipeline)
    throw std::invalid_argument(fmt::format("a {} x {} x {} layout with {} stage traces on a cluster of {} GPUs",
                                            layout.tensor, layout.pipeline, layout.data, workload.stages.size(), world));
  int fold = options.fold_data_parallel;
  if (fold < 0 || fold == 1)
    throw std::invalid_argument(fmt::format("fold_data_parallel {}: simulate 2 or more ranks of a group (0: all)", fold));
  // A system whose result needs more simulated ranks than asked gets them (exact, only slower).
  if (fold > 0) fold = std::max(fold, system.min_folded_data_parallel(hardware));
  const bool folds = fold > 0 && fold < layout.data && system.folds_data_parallel();
  const int simulated_data = folds ? fold : layout.data;
  const int simulated_gpus = layout.tensor * layout.pipeline * simulated_data;
  if (folds) check_fold_spans_servers(topology, layout, simulated_data);

  // The stage that fits worst decides (stage_fit.hpp).
  const StageFit stage_fit = worst_stage_fit(workload, hardware, topology.optimizer_nodes().size(), system);
  const Fit& fit = stage_fit.fit();
  SystemResult result;
  if (!fit.runs() && options.check_memory) {
    result.system = system.label();
    result.workers = world;
    result.feasible = false;
    result.reason = stage_fit.problem();
    result.memory = footprint_to_json(fit.footprint);
    return SystemSimulation(std::move(result));
  }
  if (simulated_gpus > kMaxSimulatedGpus) {
    result.system = system.label();
    result.workers = world;
    result.feasible = false;
    result.reason = fmt::format("{} GPUs to simulate: luwusim simulates at most {} in one process{}", simulated_gpus,
                                kMaxSimulatedGpus,
                                fold > 0 ? fmt::format(" ({} does not fold its data-parallel ranks)", system.label())
                                         : " (simulation.fold_data_parallel folds them)");
    result.memory = footprint_to_json(fit.footprint);
    return SystemSimulation(std::move(result));
  }

  // What the result takes from the fit rather than the simulation.
  result.memory = footprint_to_json(fit.footprint);
  if (folds) result.folding = Folding{layout.data, simulated_data};
  result.gpu_peak_memory_bytes.resize(static_cast<std::size_t>(world));
  for (int r = 0; r < world; ++r)
    result.gpu_peak_memory_bytes[static_cast<std::size_t>(r)] = static_cast<double>(
        stage_fit.stages[static_cast<std::size_t>(parallel_coords(layout, r).stage)].footprint.gpu_total_bytes());
  // The child is forked here: it reads workload, topology and hardware as they are now.
  auto child = IsolatedChild::start(
      [&] { return simulate_in_this_process(workload, topology, hardware, system, options, simulated_data).dump(); },
      {.label = "simulation process"});
  return SystemSimulation(std::move(result), std::move(child), "simulating " + system.label());
}

SystemResult simulate_parallel_system(const ParallelWorkload& workload, const topologies::Topology& topology,
                                      const Hardware& hardware, const System& system,
                                      const SimulationOptions& options) {
  return start_parallel_system(workload, topology, hardware, system, options).finish();
}

SystemResult SystemSimulation::finish() {
  if (!child_) return std::move(known_);
  const IsolatedResult outcome = child_->finish();
  child_.reset();
  throw_unless_ok(outcome, what_);
  SystemResult result = result_from_json(luwu::Json::parse(outcome.output));
  result.memory = std::move(known_.memory);
  result.folding = known_.folding;
  result.gpu_peak_memory_bytes = std::move(known_.gpu_peak_memory_bytes);
  return result;
}

}  // namespace luwu::sim
