#include "sim/experiment/simulate.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <set>
#include <stdexcept>

#include <fmt/format.h>
#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Link.hpp>

#include "models/gpu.hpp"
#include "sim/engine/cluster_roles.hpp"
#include "sim/engine/engine_config.hpp"
#include "sim/experiment/isolated_run.hpp"
#include "sim/experiment/spine_utilization.hpp"
#include "sim/systems/schedule.hpp"
#include "topologies/lowering.hpp"

namespace luwu::sim {
namespace {

// Runs inside the simulation process: the engine, the platform, one actor per rank.
luwu::Json simulate_in_this_process(const workloads::Trace& trace, const topologies::Topology& topo,
                                    const Hardware& hardware, const System& system,
                                    const SimulationOptions& options) {
  const models::GpuSpec& gpu_spec = hardware.gpu;
  auto engine = make_engine();
  topologies::LoweringOptions lowering;
  lowering.route_choice = options.routing;
  lowering.flow_splitting = static_cast<std::size_t>(std::max(1, options.flow_splitting));
  auto platform = topologies::lower_to_simgrid(topo, *engine, lowering);

  const ClusterRoles roles = roles_of(topo, platform);
  const int world = roles.world();

  Timeline timeline(options.record_timeline);
  TrafficMeter traffic;
  traffic.attach_timeline(&timeline);  // only an enabled one: otherwise the meter records as before
  const CollectiveSettings collective_settings = system.collectives();
  std::vector<std::unique_ptr<GpuDevice>> gpus;
  std::vector<simgrid::s4u::Host*> engines;
  for (int r = 0; r < world; ++r) {
    gpus.push_back(std::make_unique<GpuDevice>(r, roles.ranks[r].gpu, gpu_spec, &timeline,
                                               collective_settings.sm_sharing, hardware.worker_nic.goodput_Bps()));
    engines.push_back(gpus.back()->collective_engine());
  }
  DataParallelCollectives collectives(roles.gpu_hosts(), roles.servers(), collective_settings.algorithm,
                                      CollectiveContext{options.mode, &traffic}, engines,
                                      hardware.network_switch ? roles.network_switch : nullptr);
  ClusterEnv cluster{trace, hardware, roles, collectives, traffic, timeline, {}};
  for (auto& g : gpus) cluster.gpus.push_back(g.get());
  auto schedule = system.make_schedule(cluster);

  for (int r = 0; r < world; ++r) {
    simgrid::s4u::Actor::create("rank" + std::to_string(r), roles.ranks[r].gpu, [&, r] {
      RankEnv env{cluster, *gpus[r], roles.ranks[r]};
      schedule->run_rank(env);
      gpus[r]->times().finish_s = simgrid::s4u::Engine::get_clock();
      gpus[r]->times().finished = true;
    });
  }
  engine->run();

  SystemResult result;
  result.system = system.label();
  result.workers = world;
  for (auto& g : gpus) {
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
  for (auto& g : gpus) {
    const RankTimes& rt = g->times();
    result.breakdown.compute_s += rt.compute_s / world;
    result.breakdown.exposed_communication_s += rt.communication_wait_s / world;
    result.breakdown.exposed_optimizer_s += rt.optimizer_s / world;
    result.breakdown.io_stall_s += rt.io_wait_s / world;
    result.contention.compute_stretch_s += (rt.compute_s - rt.undisturbed_compute_s) / world;
    result.contention.collective_launch_wait_s += rt.collective_launch_wait_s / world;
    // Idle is what the accounted parts leave; rounding can leave a negative crumb.
    double idle = t - rt.compute_s - rt.communication_wait_s - rt.optimizer_s - rt.io_wait_s;
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
  for (auto gpu : topo.gpus()) nics.insert(topo.nic_of(gpu));
  for (auto nic : nics) {
    auto sw = topo.switch_of(nic);
    if (!sw) continue;
    auto [edge, found] = boost::edge(nic, *sw, topo.graph);
    if (!found) continue;
    result.sent_bytes_per_worker += traffic.bytes_on(platform.directed_link(topo, edge, nic)) / world;
    result.received_bytes_per_worker += traffic.bytes_on(platform.directed_link(topo, edge, *sw)) / world;
  }
  result.tokens_per_s = trace.tokens_per_iteration() * world / t;
  result.tflops_per_gpu = trace.flops_per_iteration() / t / 1e12;
  const double model_flops = trace.flops_of(workloads::OpKind::Forward) + trace.flops_of(workloads::OpKind::Backward);
  result.mfu = model_flops / (t * gpu_spec.peak_flops(precision_of(trace.training.dtype)));
  for (const auto& [name, bytes] : traffic.link_bytes_by_name()) {
    double bw = simgrid::s4u::Link::by_name(name)->get_bandwidth();
    result.links.push_back({name, bytes, bw, bytes / (bw * t)});
  }
  result.spines = spine_use(topo, platform, traffic, t);
  result.details = schedule->details(t);
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

SystemResult simulate_system(const workloads::Trace& trace, const topologies::Topology& topology,
                             const Hardware& hardware, const System& system,
                             const SimulationOptions& options) {
  const int world = static_cast<int>(topology.gpus().size());
  if (world > kMaxSimulatedGpus)
    throw std::invalid_argument(fmt::format("{} GPUs: luwusim simulates at most {} GPUs in one process",
                                            world, kMaxSimulatedGpus));

  const Fit fit = system.fit(trace, hardware);
  SystemResult result;
  if (!fit.runs() && options.check_memory) {
    result.system = system.label();
    result.workers = world;
    result.feasible = false;
    result.reason = fit.problem;
    result.memory = footprint_to_json(fit.footprint);
    return result;
  }

  auto outcome = run_isolated([&] { return simulate_in_this_process(trace, topology, hardware, system, options).dump(); });
  throw_unless_ok(outcome, "simulating " + system.label());
  result = result_from_json(luwu::Json::parse(outcome.output));
  result.memory = footprint_to_json(fit.footprint);
  result.gpu_peak_memory_bytes.assign(static_cast<std::size_t>(world), static_cast<double>(fit.footprint.gpu_total_bytes()));
  return result;
}

}  // namespace luwu::sim
