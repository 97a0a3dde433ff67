// LuWu: model-in-network data parallelism (Sun et al., arXiv 2409.00918).
//
// GPU workers keep no persistent parameters, gradients or optimizer state.  The in-network
// optimizer node holds the fp16 parameters and the fp32 master, m and v, over DRAM and SSD.
//  - Forward, per layer: the node sends the layer's fp16 parameters once; the switch multicasts
//    them to every worker; each SmartNIC writes them into GPU memory by DMA (no GPU kernel, only
//    the smaller DMA interference).  The node streams `prefetch_layers` layers ahead of compute.
//  - Backward, per layer: the parameters are multicast again; each worker's SmartNIC streams the
//    layer's gradient into the switch, which aggregates it in-network (a window of aggregation
//    slots per worker, so min(line rate, slots x payload / RTT)) and forwards one aggregated copy
//    to the node.  Each micro-batch's aggregate is accumulated at the node.
//  - The node updates layer l as soon as its aggregated gradient of the last micro-batch has
//    arrived, pipelined behind backward: layer l's state is prefetched from SSD into DRAM
//    (`state_prefetch_layers` ahead), updated on the node's CPU (or a GPU beside it:
//    `update_engine`), and written back.
// The iteration ends when the last layer is updated (the next forward needs layer 0 first).
#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include <simgrid/s4u/Actor.hpp>

#include "models/gpu_update_engine.hpp"
#include "models/host.hpp"
#include "sim/countdown.hpp"
#include "sim/stream.hpp"
#include "sim/systems/systems.hpp"
#include "sim/systems/luwu_placement.hpp"
#include "sim/transfers.hpp"

namespace luwu::sim {
namespace {

using workloads::OpKind;

class Luwu : public Schedule {
 public:
  explicit Luwu(ClusterEnv& env) : env_(env), trace_(env.trace), world_(env.world()) {
    if (!env.roles.optimizer_node || !env.hw.optimizer_node)
      throw std::invalid_argument("luwu needs an optimizer node in the topology (see the luwu-star builder)");
    if (!env.roles.network_switch || !env.hw.network_switch)
      throw std::invalid_argument("luwu needs a programmable switch between the workers and the optimizer node");
    placement_ = luwu_placement(trace_, *env.hw.optimizer_node, env.settings);
    if (env.settings.update_engine == "gpu")
      update_gpu_ = {models::gpu_from_profile(models::find_profile(env.settings.update_gpu)),
                     models::pcie_from_profile(models::find_profile(env.settings.update_gpu_pcie))};
    chunks_ = env.settings.pipeline_chunks;

    const auto needs = ops_needing_params(trace_);
    for (std::size_t i = 0; i < trace_.ops.size(); ++i)
      if (needs[i]) param_ops_.push_back(i);
    delivered_.assign(world_, std::vector<std::shared_ptr<Countdown>>(param_ops_.size()));
    consumed_.assign(param_ops_.size(), nullptr);
    for (std::size_t k = 0; k < param_ops_.size(); ++k) {
      consumed_[k] = std::make_shared<Countdown>(world_);
      for (int r = 0; r < world_; ++r) delivered_[r][k] = std::make_shared<Countdown>(chunks_);
    }
    for (std::size_t i = 0; i < trace_.ops.size(); ++i) {
      const auto& op = trace_.ops[i];
      if (op.kind == OpKind::Backward && op.grad_bytes > 0) {
        gradient_ready_[i] = std::make_shared<Countdown>(chunks_);
        for (int c = 0; c < chunks_; ++c) piece_arrivals_[{i, c}] = std::make_shared<Countdown>(world_);
      }
    }

    const auto& roles = env.roles;
    Timeline* tl = &env.timeline;
    node_ = roles.optimizer_node;
    switch_ = roles.network_switch;
    forward_stream_ = std::make_unique<Stream>("switch", "aggregate -> optimizer node", "communication", switch_, tl);
    read_stream_ = std::make_unique<Stream>("optnode", "state read (ssd)", "io", node_, tl);
    update_stream_ = std::make_unique<Stream>("optnode", "update (" + env.settings.update_engine + ")", "optimizer",
                                              node_, tl);
    write_stream_ = std::make_unique<Stream>("optnode", "state write-back (ssd)", "io", node_, tl);

    const double rtt = 2 * env.traffic.route_latency_s(roles.ranks.front().gpu, switch_);
    const double payload = env.hw.network_switch->payload_bytes();
    aggregation_Bps_ = env.hw.network_switch->aggregation_throughput_Bps(
        rtt, env.hw.worker_nic.goodput_Bps(payload), world_);

    // Streams take work from actors only, so the node's pipeline is laid out by one.
    updates_done_ = make_completion();
    simgrid::s4u::Actor::create("optnode/pipeline", node_, [this] { start_updates(); });
    simgrid::s4u::Actor::create("optnode/param multicast", node_, [this] { multicast_parameters(); })->daemonize();
  }

  void run_rank(RankEnv& env) override {
    GpuDevice& gpu = env.gpu;
    const int r = env.rank();
    Stream upload(gpu.name(), "gradient to switch (smartnic dma)", "communication", gpu.host(), &env_.timeline);
    CompletionPtr uploaded = completed();
    std::size_t k = 0;            // next param op
    long holding = -1;            // param op whose parameters the GPU holds
    for (std::size_t i = 0; i < trace_.ops.size(); ++i) {
      const auto& op = trace_.ops[i];
      const std::string label = op_label(trace_, op);
      if (k < param_ops_.size() && param_ops_[k] == i) {
        if (holding >= 0) consumed_[holding]->arrive();
        holding = static_cast<long>(k);
        gpu.wait(delivered_[r][k++]->done(), WaitCause::Communication, "parameters multicast " + label);
      }
      gpu.compute(label, env.op_time_s(op));
      if (op.kind == OpKind::Backward && op.grad_bytes > 0) {
        const double piece = static_cast<double>(op.grad_bytes) / chunks_ * wire_bytes_per_grad_byte();
        uploaded = upload.enqueue("gradient " + label, [this, &env, i, piece] {
          GpuDevice::LoadScope dma(env.gpu, GpuDevice::LoadKind::NicDma);
          for (int c = 0; c < chunks_; ++c) {
            transfer(env.gpu.host(), switch_, piece, env_.traffic, aggregation_Bps_);
            arrive(i, c, piece);
          }
        });
      }
    }
    if (holding >= 0) consumed_[holding]->arrive();
    gpu.wait(uploaded, WaitCause::Communication, "gradient to switch");
    gpu.wait(updates_done_, WaitCause::Optimizer, "optimizer node updates");
  }

 private:
  double wire_bytes_per_grad_byte() const {
    return env_.settings.aggregation_element_bytes / workloads::bytes_per_element(trace_.training.dtype);
  }

  // The node sends each layer's parameters once per need, piece by piece; the switch replicates
  // every piece to all workers as soon as it has it.  A worker buffers prefetch_layers + 1 layers.
  void multicast_parameters() {
    const std::size_t ahead = static_cast<std::size_t>(env_.settings.prefetch_layers) + 1;
    for (std::size_t k = 0; k < param_ops_.size(); ++k) {
      if (k >= ahead) consumed_[k - ahead]->done()->wait();
      const auto& op = trace_.ops[param_ops_[k]];
      const double piece = static_cast<double>(op.param_bytes) / chunks_;
      const double start = simgrid::s4u::Engine::get_clock();
      for (int c = 0; c < chunks_; ++c) {
        if (placement_.param_ssd_share > 0)
          read_striped(env_.roles.optimizer_ssds, piece * placement_.param_ssd_share, env_.traffic);
        transfer(node_, switch_, piece, env_.traffic);
        for (int r = 0; r < world_; ++r)
          simgrid::s4u::Actor::create("multicast leg", switch_, [this, r, k, piece] {
            GpuDevice::LoadScope dma(*env_.gpus[r], GpuDevice::LoadKind::NicDma);
            transfer(switch_, env_.roles.ranks[r].gpu, piece, env_.traffic);
            delivered_[r][k]->arrive();
          });
      }
      env_.timeline.add("optnode", "parameter send", "params " + op_label(trace_, op), "communication", start,
                        simgrid::s4u::Engine::get_clock());
    }
  }

  // A piece of op i's gradient has arrived from one worker; once all have, the switch forwards
  // the aggregate to the node.
  void arrive(std::size_t i, int c, double piece) {
    auto& all = piece_arrivals_.at({i, c});
    all->arrive();
    if (!all->done()->done()) return;
    forward_stream_->enqueue("aggregate " + op_label(trace_, trace_.ops[i]), [this, i, piece] {
      transfer(switch_, node_, piece, env_.traffic);
      gradient_ready_.at(i)->arrive();
    });
  }

  // The node's pipeline: for every gradient, accumulate it (earlier micro-batches) or update the
  // layer (the last micro-batch): state read ahead from SSD, update on the CPU, write back.
  void start_updates() {
    const auto& host = *env_.hw.optimizer_node;
    const auto cost = models::adam_mixed_precision_cost();
    const int last = trace_.training.grad_accum - 1;
    std::vector<CompletionPtr> updated;
    CompletionPtr written = completed();
    for (std::size_t i = 0; i < trace_.ops.size(); ++i) {
      const auto& op = trace_.ops[i];
      if (op.kind != OpKind::Backward || op.grad_bytes == 0) continue;
      const double params = static_cast<double>(trace_.layers[op.layer].params);
      const std::string label = trace_.layers[op.layer].name;
      if (op.micro_step < last) {
        // fp32 accumulator += aggregate: read both, write one, over the node's DRAM.
        const double accumulate_s = params * 3 * 4 / host.dram.achieved_Bps();
        update_stream_->enqueue("accumulate " + label, [this, accumulate_s] { execute_on(node_, accumulate_s); },
                                {gradient_ready_.at(i)->done()});
        continue;
      }
      const double state_on_ssd = params * cost.state_bytes_per_param * placement_.state_ssd_share;
      std::vector<CompletionPtr> read_deps;
      const std::size_t ahead = static_cast<std::size_t>(env_.settings.state_prefetch_layers);
      if (updated.size() >= ahead + 1) read_deps.push_back(updated[updated.size() - ahead - 1]);
      auto state_read = read_stream_->enqueue(
          "read state " + label,
          [this, state_on_ssd] { read_striped(env_.roles.optimizer_ssds, state_on_ssd, env_.traffic); }, read_deps);
      models::StatePlacement where{1 - placement_.state_ssd_share, 0, placement_.state_ssd_share};
      auto t = models::cpu_optimizer_step_times(host, params, cost, where);
      // The SSD part is the disk I/O; the DRAM streaming happens whichever engine updates.
      const double update_s = update_gpu_ ? std::max(t.dram_s, models::gpu_update_times(params, cost, update_gpu_->first,
                                                                                         update_gpu_->second).total_s)
                                          : std::max(t.dram_s, t.compute_s);
      updated.push_back(update_stream_->enqueue("update " + label, [this, update_s] { execute_on(node_, update_s); },
                                                {gradient_ready_.at(i)->done(), state_read}));
      written = write_stream_->enqueue(
          "write state " + label,
          [this, state_on_ssd] { write_striped(env_.roles.optimizer_ssds, state_on_ssd, env_.traffic); },
          {updated.back()});
    }
    written->wait();
    updates_done_->set();
  }

  ClusterEnv& env_;
  const workloads::Trace& trace_;
  const int world_;
  LuwuPlacement placement_;
  std::optional<std::pair<models::GpuSpec, models::PcieSpec>> update_gpu_;  // the "gpu" update engine
  int chunks_ = 1;
  double aggregation_Bps_ = 0;
  simgrid::s4u::Host* node_ = nullptr;
  simgrid::s4u::Host* switch_ = nullptr;
  std::vector<std::size_t> param_ops_;
  std::vector<std::vector<std::shared_ptr<Countdown>>> delivered_;  // [rank][param op]: pieces arrived
  std::vector<std::shared_ptr<Countdown>> consumed_;                 // [param op]: ranks done with it
  std::map<std::pair<std::size_t, int>, std::shared_ptr<Countdown>> piece_arrivals_;  // [(op, piece)]: ranks
  std::map<std::size_t, std::shared_ptr<Countdown>> gradient_ready_;                  // [op]: pieces at the node
  std::unique_ptr<Stream> forward_stream_, read_stream_, update_stream_, write_stream_;
  CompletionPtr updates_done_;
};

}  // namespace

std::unique_ptr<Schedule> make_luwu_schedule(ClusterEnv& env) { return std::make_unique<Luwu>(env); }

}  // namespace luwu::sim
