#include "sim/systems/luwu/schedule.hpp"

#include <algorithm>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include <simgrid/s4u/Actor.hpp>

#include "models/gpu_update_engine.hpp"
#include "models/host.hpp"
#include "models/reliable_transport.hpp"
#include "sim/engine/countdown.hpp"
#include "sim/engine/pacing_host.hpp"
#include "sim/engine/stream.hpp"
#include "sim/systems/checkpoint_offload.hpp"
#include "sim/systems/data_mover.hpp"
#include "sim/systems/in_switch_aggregation.hpp"
#include "sim/systems/luwu/placement.hpp"
#include "sim/systems/model_state.hpp"
#include "sim/systems/out_of_core_pipeline.hpp"
#include "sim/systems/param_fetch_replay.hpp"
#include "sim/systems/param_prefetch.hpp"
#include "sim/engine/transfers.hpp"

namespace luwu::sim {
namespace {

using workloads::OpKind;

class LuwuSchedule : public Schedule {
 public:
  LuwuSchedule(const LuwuSettings& settings, ClusterEnv& env)
      : settings_(settings),
        env_(env),
        trace_(env.trace),
        world_(env.world()),
        param_ops_(multicast_ops(env.trace, settings)),
        aggregation_(env, settings.aggregation, "luwu") {
    switch_ = aggregation_.switch_host();
    make_sites();
    placement_ = luwu_site_placement(trace_, env.hw, settings);
    if (settings.update_engine == LuwuSettings::UpdateEngine::Gpu)
      update_gpu_ = {models::gpu_from_profile(env.hw.profiles.resolve(settings.update_gpu)),
                     models::pcie_from_profile(env.hw.profiles.resolve(settings.update_gpu_pcie))};

    const int pieces = aggregation_.pieces();
    // What the node multicasts: each layer's parameters per use (param_ops_), or the sub-module
    // plan's gathers, each sent once every worker has come to where it is issued.
    if (settings.sub_module_fetch) plan_ = plan_param_fetches(trace_, *settings.sub_module_fetch);
    const std::size_t units = settings.sub_module_fetch ? plan_.gathers.size() : param_ops_.size();
    delivered_.assign(world_, std::vector<std::shared_ptr<Countdown>>(units));
    if (settings.push_pull == DataMover::GpuKernel) pull_kernel_launched_.assign(world_, {});
    for (std::size_t k = 0; k < units; ++k) {
      consumed_.push_back(std::make_shared<Countdown>(world_));
      for (int r = 0; r < world_; ++r) delivered_[r][k] = std::make_shared<Countdown>(pieces * static_cast<int>(sites_.size()));
      for (auto& rank : pull_kernel_launched_) rank.push_back(make_completion());
    }
    gradient_round_.assign(trace_.ops.size(), kNoRound);
    for (std::size_t i = 0; i < trace_.ops.size(); ++i) {
      const auto& op = trace_.ops[i];
      if (op.kind != OpKind::Backward || op.grad_bytes == 0) continue;
      // Resident parameters: the workers accumulate on the GPU and push the last micro-step's.
      if (resident() && op.micro_step != trace_.training.grad_accum - 1) continue;
      gradient_round_[i] = aggregation_.add_round(static_cast<double>(op.grad_bytes));
      round_label_.push_back(op_label(trace_, op));
      for (auto& site : sites_) site.gradient.push_back(std::make_shared<Countdown>(pieces));
    }
    aggregation_.on_summed([this](std::size_t round, int, double piece) { forward_to_node(round, piece); });
    set_smartnic_caps(env.hw);
    if (settings.optimizer_placement == LuwuSettings::OptimizerPlacement::Node) set_reliability_caps(env.hw);

    Timeline* tl = &env.timeline;
    forward_stream_ = std::make_unique<Stream>("switch", "aggregate -> optimizer node", "communication", switch_, tl);
    int lanes = 0;
    if (const auto& rates = site_host_->thread_rates; rates && !update_gpu_) {
      // Each step gets the threads it needs to keep up with the line rate (models/optimizer_node.hpp).
      const auto bytes = model_state_bytes(trace_.training.dtype);
      const models::NodeSizes sizes{static_cast<double>(bytes.param), static_cast<double>(bytes.grad),
                                    adam_cost(trace_.training.dtype)};
      const auto threads = models::step_threads(sizes, *rates, env.hw.worker_nic.line_rate_Bps);
      update_threads_ = threads[static_cast<std::size_t>(models::NodeStep::Update)];
      int total = 0;
      for (int t : threads) total += t;
      // Layer-centric: a group as large as the update needs per layer in flight.
      if (settings.node_pipelining == LuwuSettings::NodePipelining::LayerCentric) lanes = std::max(1, total / update_threads_);
    }
    updates_done_ = std::make_shared<Countdown>(static_cast<int>(sites_.size()));
    for (auto& site : sites_) {
      site.pipeline = std::make_unique<OutOfCorePipeline>(
          site.name, site.host, site.ssds,
          OutOfCorePolicy{.read_ahead = settings.state_prefetch_layers, .write_buffers = 0, .serial_writes = true, .lanes = lanes},
          env.traffic, tl, update_gpu_ ? "gpu" : "cpu");
      // The site's DRAM serves every step at once: SSD reads and write-backs, the parameters going
      // out to the NIC, the gradients coming in, and the update's own reads and writes.
      site.memory_bus = make_pacing_host(site.name + "/memory bus", {site_host_->dram.achieved_Bps()});
      site.pipeline->set_memory_bus(site.memory_bus);
      // Streams take work from actors only, so each site's pipeline is laid out by one.
      Site* at = &site;
      simgrid::s4u::Actor::create(site.name + "/pipeline", site.host, [this, at] { optimizer_pipeline(*at); });
      if (placement_.param_ssd_share > 0) {
        for (std::size_t k = 0; k < units; ++k) {
          site.params_read.push_back(make_completion());
          site.params_sending.push_back(make_completion());
        }
        simgrid::s4u::Actor::create(site.name + "/parameter reads", site.host, [this, at] { read_parameters_ahead(*at); })
            ->daemonize();
      }
      simgrid::s4u::Actor::create(site.name + "/param multicast", site.host, [this, at] {
        if (settings_.sub_module_fetch)
          sub_module_multicast(*at);
        else
          parameter_multicast(*at);
      })->daemonize();
    }
  }

  // A worker: it waits for each layer's parameters, computes, and its SmartNIC streams each
  // gradient into the switch while backward goes on.
  void run_rank(RankEnv& env) override {
    GpuDevice& gpu = env.gpu;
    const int r = env.rank();
    Timeline* tl = &env_.timeline;
    Stream upload(gpu.name(),
                  settings_.push_pull == DataMover::GpuKernel ? "gradient to switch (gpu kernel)"
                                                              : "gradient to switch (smartnic dma)",
                  "communication", gpu.host(), tl);
    Stream to_host(gpu.name(), "checkpoint to host (pcie)", "io", gpu.host(), tl);
    Stream to_gpu(gpu.name(), "checkpoint to gpu (pcie)", "io", gpu.host(), tl);
    CheckpointOffload checkpoints(env, settings_.checkpoints, to_host, to_gpu);
    // Checkpoints come back as far ahead as parameters are multicast.
    ParamPrefetch checkpoint_prefetch(trace_, settings_.prefetch.layers, [&](std::size_t i) { checkpoints.fetch_back(i); });

    // Sub-module streaming: the plan's replay waits before each sub-module's first kernel and
    // tells the node when this worker has come to where a gather is issued.
    std::optional<ParamFetchReplay> replay;
    if (settings_.sub_module_fetch)
      replay.emplace(
          env, plan_,
          [this, r](std::size_t g) {
            consumed_[g]->arrive();  // here: "requested"
            return ParamFetchReplay::Issued{nullptr, delivered_[r][g]->done()};
          },
          "parameters multicast");

    CompletionPtr uploaded = completed();
    std::size_t k = 0;  // next param op
    long holding = -1;  // param op whose parameters the GPU holds
    for (std::size_t i = 0; i < trace_.ops.size(); ++i) {
      const auto& op = trace_.ops[i];
      const std::string label = op_label(trace_, op);
      checkpoint_prefetch.before(i);
      if (!replay && k < param_ops_.size() && param_ops_[k] == i) {
        if (holding >= 0) consumed_[holding]->arrive();
        holding = static_cast<long>(k);
        gpu.wait(delivered_[r][k++]->done(), WaitCause::Communication, "parameters multicast " + label);
      }
      checkpoints.wait_before_compute(i);
      if (replay)
        replay->compute(i);
      else
        env.compute(op);
      checkpoints.after_compute(i);
      if (gradient_round_[i] != kNoRound) {
        const std::size_t round = gradient_round_[i];
        uploaded = upload.enqueue("gradient " + label, [this, &env, round, issued = env.gpu.kernels_launched()] {
          aggregation_.send(env, round, settings_.push_pull, issued);
        });
      }
    }
    if (holding >= 0) consumed_[holding]->arrive();
    gpu.wait(uploaded, WaitCause::Communication, "gradient to switch");
    gpu.wait(updates_done_->done(), WaitCause::Optimizer, "optimizer node updates");
  }

 private:
  static constexpr std::size_t kNoRound = static_cast<std::size_t>(-1);

  bool resident() const { return settings_.parameter_residency == LuwuSettings::ParameterResidency::PerIteration; }

  // The ops before which the node multicasts their layer's parameters: every op that needs them
  // (per-use), or each layer's first (per-iteration: the GPU keeps them for the iteration).
  static std::vector<std::size_t> multicast_ops(const workloads::Trace& trace, const LuwuSettings& settings) {
    std::vector<std::size_t> ops = param_ops(trace);
    if (settings.parameter_residency != LuwuSettings::ParameterResidency::PerIteration) return ops;
    std::vector<char> seen(trace.layers.size(), 0);
    std::vector<std::size_t> first;
    for (std::size_t i : ops) {
      const auto layer = static_cast<std::size_t>(trace.ops[i].layer);
      if (seen[layer]) continue;
      seen[layer] = 1;
      first.push_back(i);
    }
    return first;
  }

  // Where the optimizer runs and what it keeps: LuWu's optimizer node, or (the paper's colocated
  // parameter-server ablation) a site on each worker server, its CPU, DRAM and NVMe, each with
  // 1/K of every layer's parameters and optimizer state.  Every site sends its share of each
  // layer's parameters into the switch for the multicast, takes its share of each aggregated
  // gradient, and updates it.
  struct Site {
    std::string name;
    simgrid::s4u::Host* host = nullptr;
    std::vector<simgrid::s4u::Disk*> ssds;
    simgrid::s4u::Host* memory_bus = nullptr;  // its DRAM bandwidth (sim/engine/pacing_host.hpp)
    std::unique_ptr<OutOfCorePipeline> pipeline;
    std::vector<std::shared_ptr<Countdown>> gradient;  // [round]: its share's pieces arrived
    // Out of core, per unit sent: its parameters are in DRAM / their send has begun.
    std::vector<CompletionPtr> params_read, params_sending;
  };

  void make_sites() {
    if (settings_.optimizer_placement == LuwuSettings::OptimizerPlacement::Node) {
      if (!env_.roles.optimizer_node || !env_.hw.optimizer_node)
        throw std::invalid_argument("luwu needs an optimizer node in the topology (see the luwu-star builder)");
      sites_.resize(1);
      // The first node is "optnode"; another is named after its host (optnode1, ...), so that each
      // node's memory bus is its own, shared only by the groups that node serves.
      const auto& nodes = env_.roles.optimizer_nodes;
      sites_[0].name = nodes.empty() || env_.roles.optimizer_node == nodes.front()
                           ? std::string("optnode")
                           : env_.roles.optimizer_node->get_name();
      sites_[0].host = env_.roles.optimizer_node;
      sites_[0].ssds = env_.roles.optimizer_ssds;
    } else {
      std::vector<int> seen;
      for (const auto& rank : env_.roles.ranks) {
        if (std::find(seen.begin(), seen.end(), rank.server) != seen.end()) continue;
        seen.push_back(rank.server);
        Site& site = sites_.emplace_back();
        site.name = "ps" + std::to_string(rank.server);
        site.host = rank.cpu;
        site.ssds = rank.nvme;
      }
    }
    share_ = 1.0 / static_cast<double>(sites_.size());
    site_host_ = &luwu_site_host(env_.hw, settings_);
  }

  // Rate caps (bytes/s of payload; -1: none) that SmartNICs of kind soc put on LuWu's flows
  // (models/smartnic.hpp), with only one direction streaming (forward: parameters alone) or both.
  struct Caps {
    double worker_pull_Bps = -1;
    double node_push_Bps = -1;
    double node_pull_Bps = -1;
  };

  // A cap applies only where it is below what the NIC's link already carries (its goodput at MTU),
  // so an on-path (fpga) SmartNIC's flows stay plain max-min shares of their routes.
  static double cap_below_link(const models::SmartNicSpec& nic, double cap_Bps) {
    return cap_Bps < nic.nic.goodput_Bps() ? cap_Bps : -1;
  }

  void set_smartnic_caps(const Hardware& hw) {
    if (const auto& nic = hw.worker_smartnic) {
      // Gradients go out in the switch's aggregation packets while parameters come in.
      aggregation_.cap_rate_Bps(nic->push_pull_each_Bps(hw.network_switch->payload_bytes()));
      both_.worker_pull_Bps = cap_below_link(*nic, nic->push_pull_each_Bps(nic->nic.mtu_bytes));
      alone_.worker_pull_Bps = cap_below_link(*nic, nic->one_direction_Bps(nic->nic.mtu_bytes));
    }
    if (const auto& nic = hw.optimizer_smartnic; nic && settings_.optimizer_placement == LuwuSettings::OptimizerPlacement::Node) {
      both_.node_push_Bps = both_.node_pull_Bps = cap_below_link(*nic, nic->push_pull_each_Bps(nic->nic.mtu_bytes));
      alone_.node_push_Bps = cap_below_link(*nic, nic->one_direction_Bps(nic->nic.mtu_bytes));
    }
  }

  // The reliable transport's frames share the node's line and packet rate with its data
  // (models/reliable_transport.hpp): what would move without them is scaled by the share they leave.
  void set_reliability_caps(const Hardware& hw) {
    const models::NicSpec& nic = hw.optimizer_smartnic ? hw.optimizer_smartnic->nic : hw.worker_nic;
    models::NodeLinkLimits link{nic.line_rate_Bps, std::numeric_limits<double>::infinity(), nic.header_bytes,
                                nic.mtu_bytes, hw.network_switch->payload_bytes()};
    if (hw.optimizer_smartnic) link.packets_per_s = hw.optimizer_smartnic->packets_per_s;
    auto rate = [&](double cap_Bps) { return cap_Bps > 0 ? cap_Bps : nic.goodput_Bps(); };
    const double forward = models::reliable_share(link, settings_.reliability, env_.data_parallel_size(), rate(alone_.node_push_Bps), 0);
    const double backward = models::reliable_share(link, settings_.reliability, env_.data_parallel_size(), rate(both_.node_push_Bps),
                                                   aggregation_.rate_Bps());
    if (forward < 1) alone_.node_push_Bps = forward * rate(alone_.node_push_Bps);
    if (backward < 1) {
      both_.node_push_Bps = backward * rate(both_.node_push_Bps);
      // The aggregates stream in at the aggregation's rate (so many frames) but each piece is
      // forwarded whole, store-and-forward, at the link's rate: that transfer is what is scaled.
      both_.node_pull_Bps = backward * rate(both_.node_pull_Bps);
    }
  }

  // The optimizer node sends each layer's parameters once per need (per-iteration residency: once),
  // piece by piece (from SSD for the share that lives there); the switch replicates every piece to
  // all workers as soon as it has it, and each SmartNIC writes it into GPU memory by DMA.  A worker buffers prefetch_layers + 1
  // layers, so the node waits for every worker to be done with a layer before sending one that
  // many layers later.
  void parameter_multicast(Site& site) {
    const std::size_t ahead = static_cast<std::size_t>(settings_.prefetch.layers) + 1;
    for (std::size_t k = 0; k < param_ops_.size(); ++k) {
      // Resident parameters need no room freed on the GPU: each layer goes out as the last is done.
      if (k >= ahead && !resident()) consumed_[k - ahead]->done()->wait();
      const auto& op = trace_.ops[param_ops_[k]];
      send_parameters(site, k, unit_bytes(k), op.kind, "params " + op_label(trace_, op));
    }
  }

  // Bytes of unit k's parameters that one site sends (a layer's per use, or a sub-module gather's).
  double unit_bytes(std::size_t k) const {
    if (settings_.sub_module_fetch)
      return static_cast<double>(plan_.gathers[k].params) * workloads::bytes_per_element(trace_.training.dtype) * share_;
    return static_cast<double>(trace_.ops[param_ops_[k]].param_bytes) * share_;
  }

  // Out of core, the node's reading step (a thread of its own in step-centric pipelining) streams
  // each unit's parameters from SSD into DRAM one unit ahead of the sends: unit k once unit k - 1
  // has begun to go out, so DRAM stages at most two units.
  void read_parameters_ahead(Site& site) {
    for (std::size_t k = 0; k < site.params_read.size(); ++k) {
      if (k > 0) site.params_sending[k - 1]->wait();
      read_striped(site.ssds, unit_bytes(k) * placement_.param_ssd_share, env_.traffic);
      site.params_read[k]->set();
    }
  }

  // Sub-module streaming: gather g goes out once every worker has come to where the plan issues it
  // (its budget of live parameters has room).
  void sub_module_multicast(Site& site) {
    for (std::size_t g = 0; g < plan_.gathers.size(); ++g) {
      consumed_[g]->done()->wait();  // every worker requested it
      const ParamGather& gather = plan_.gathers[g];
      const auto& op = trace_.ops[plan_.uses[gather.first_use].op];
      send_parameters(site, g, unit_bytes(g), op.kind, "params " + param_use_label(trace_, plan_, gather.first_use));
    }
  }

  // One site's share of a unit's parameters to every worker (in forward only parameters flow;
  // otherwise gradients stream the other way at once).
  void send_parameters(Site& site, std::size_t k, double bytes, OpKind kind, const std::string& label) {
    const double piece = bytes / aggregation_.pieces();
    // Out of core, the unit's share on SSD is read ahead (read_parameters_ahead).
    if (!site.params_read.empty()) {
      site.params_read[k]->wait();
      site.params_sending[k]->set();
    }
    const double start = simgrid::s4u::Engine::get_clock();
    const Caps& caps = kind == OpKind::Forward ? alone_ : both_;
    // The unit's bytes through the node's DRAM (from SSD in, out to the NIC), alongside its pieces.
    auto dram = start_paced(site.memory_bus, bytes * (1 + placement_.param_ssd_share));
    if (settings_.push_pull == DataMover::GpuKernel && &site == &sites_.front()) post_pull_kernels(k);
    for (int c = 0; c < aggregation_.pieces(); ++c) {
      transfer(site.host, switch_, piece, env_.traffic, caps.node_push_Bps);
      if (settings_.push_pull == DataMover::NicDma) {
        aggregation_.multicast(piece, caps.worker_pull_Bps, [this, k](int r) { delivered_[r][k]->arrive(); });
        continue;
      }
      // The ablation's legs wait for each worker's pull kernel and are paced by it.
      for (int r = 0; r < world_; ++r)
        simgrid::s4u::Actor::create("multicast leg", switch_, [this, r, k, piece, rate = caps.worker_pull_Bps] {
          pull_kernel_launched_[r][k]->wait();
          paced(env_.gpus[r]->receive_engine(), piece,
                [&] { transfer(switch_, env_.roles.ranks[r].gpu, piece, env_.traffic, rate); });
          delivered_[r][k]->arrive();
        });
    }
    wait_paced(dram);
    env_.timeline.add(site.name, "parameter send", label, "communication", start, simgrid::s4u::Engine::get_clock());
  }

  // The ablation's pulls: each worker receives layer k's parameters by a kernel, posted when the
  // node starts sending them; it holds its SMs until the layer's last piece is in.
  void post_pull_kernels(std::size_t k) {
    for (int r = 0; r < world_; ++r)
      simgrid::s4u::Actor::create("pull kernel", env_.gpus[r]->host(), [this, r, k, issued = env_.gpus[r]->kernels_launched()] {
        DataMoverScope kernel(*env_.gpus[r], DataMover::GpuKernel, issued);
        pull_kernel_launched_[r][k]->set();
        delivered_[r][k]->done()->wait();
      });
  }

  // Every worker's piece of a gradient is in the switch: it forwards the sum to the node (or each
  // site its share, at once).
  void forward_to_node(std::size_t round, double piece) {
    forward_stream_->enqueue("aggregate " + round_label_[round], [this, round, piece] {
      if (sites_.size() == 1) {
        Site& node = sites_.front();
        paced(node.memory_bus, piece, [&] { transfer(switch_, node.host, piece, env_.traffic, both_.node_pull_Bps); });
        node.gradient[round]->arrive();
        return;
      }
      std::vector<simgrid::s4u::CommPtr> flows;
      std::vector<simgrid::s4u::ExecPtr> dram;
      for (auto& site : sites_) {
        dram.push_back(start_paced(site.memory_bus, piece * share_));
        flows.push_back(start_transfer(switch_, site.host, piece * share_, env_.traffic, both_.node_pull_Bps));
      }
      for (auto& f : flows) f->wait();
      for (auto& d : dram) wait_paced(d);
      for (auto& site : sites_) site.gradient[round]->arrive();
    });
  }

  // The node's pipeline, in backward's order: a gradient of an earlier micro-batch is accumulated;
  // the last micro-batch's updates its layer out of core (state read ahead from SSD, updated on
  // the CPU or a GPU beside it, written back).
  void optimizer_pipeline(Site& site) {
    const auto& host = *site_host_;
    const auto cost = adam_cost(trace_.training.dtype);
    const int last = trace_.training.grad_accum - 1;
    for (std::size_t i = 0; i < trace_.ops.size(); ++i) {
      if (gradient_round_[i] == kNoRound) continue;
      const auto& op = trace_.ops[i];
      const auto& gradient = site.gradient[gradient_round_[i]]->done();
      const double params = static_cast<double>(trace_.layers[op.layer].params) * share_;
      const std::string label = trace_.layers[op.layer].name;
      if (op.micro_step < last) {
        // fp32 accumulator += aggregate: read both, write one, over the node's DRAM.
        site.pipeline->add_update_work("accumulate " + label, 0, {gradient}, params * 3 * 4);
        continue;
      }
      const double state_on_ssd = params * cost.state_bytes_per_param * placement_.state_ssd_share;
      // The updated 16-bit parameters go back to where they live (step 6: 12 + 2 bytes to SSD).
      const double written_to_ssd =
          state_on_ssd + params * workloads::bytes_per_element(trace_.training.dtype) * placement_.param_ssd_share;
      const auto t = models::cpu_optimizer_step_times(
          host, params, cost, models::StatePlacement{1 - placement_.state_ssd_share, 0, placement_.state_ssd_share});
      // On the CPU, the update's own threads bound it too when the node's profile gives their rate.
      const auto& rates = host.thread_rates;
      const double threads_s = rates && update_threads_ > 0 ? params / (update_threads_ * rates->adam_params_per_s) : 0;
      // The SSD part is the disk I/O.  On the CPU the update's DRAM traffic goes over the node's
      // memory bus, shared with the other steps; the gpu engine's stays in its model (the PCIe
      // staging bounds it there).
      if (update_gpu_) {
        const double update_s =
            std::max(t.dram_s, models::gpu_update_times(params, cost, update_gpu_->first, update_gpu_->second).total_s);
        site.pipeline->add_unit(label, state_on_ssd, update_s, written_to_ssd, {gradient});
      } else {
        const double update_bytes = params * (cost.bytes_read_per_param + cost.bytes_written_per_param);
        site.pipeline->add_unit(label, state_on_ssd, std::max(t.compute_s, threads_s), written_to_ssd, {gradient},
                                 update_bytes);
      }
    }
    for (const auto& written : site.pipeline->write_backs()) written->wait();
    updates_done_->arrive();
  }

  LuwuSettings settings_;
  ClusterEnv& env_;
  const workloads::Trace& trace_;
  const int world_;
  std::vector<std::size_t> param_ops_;
  ParamFetchPlan plan_;  // sub-module streaming only
  InSwitchAggregation aggregation_;
  std::vector<Site> sites_;
  double share_ = 1;                 // of each layer, per site
  const models::HostSpec* site_host_ = nullptr;  // the sites' host
  LuwuPlacement placement_;          // of one site's share
  std::optional<std::pair<models::GpuSpec, models::PcieSpec>> update_gpu_;  // the "gpu" update engine
  simgrid::s4u::Host* switch_ = nullptr;
  std::vector<std::vector<std::shared_ptr<Countdown>>> delivered_;  // [rank][param op]: pieces arrived
  // [unit]: ranks done with it (layers), or that requested it (sub-module gathers)
  std::vector<std::shared_ptr<Countdown>> consumed_;
  std::vector<std::vector<CompletionPtr>> pull_kernel_launched_;     // [rank][param op], push_pull gpu-kernel
  std::vector<std::size_t> gradient_round_;                          // [op]: its aggregation round
  std::vector<std::string> round_label_;                             // [round]: its op
  Caps alone_, both_;
  int update_threads_ = 0;  // the update step's threads (0: the node's whole CPU)
  std::unique_ptr<Stream> forward_stream_;
  std::shared_ptr<Countdown> updates_done_;  // [site]
};

}  // namespace

std::unique_ptr<Schedule> make_luwu_schedule(const LuwuSettings& settings, ClusterEnv& env) {
  return std::make_unique<LuwuSchedule>(settings, env);
}

}  // namespace luwu::sim
