// SwitchML-style in-network aggregation data parallelism (Sapio et al., NSDI'21).
//
// Every GPU holds the whole model and its optimizer state, as in DDP, and backward fills gradient
// buckets of `bucket_bytes` the same way; but a full bucket is all-reduced by the programmable
// switch instead of a ring of GPU kernels.  Each worker's NIC streams the bucket into the switch by
// DMA, as packets of k elements converted to 32-bit fixed point (`aggregation_element_bytes` per
// element on the wire).  The switch keeps a pool of s aggregation slots and each worker keeps at
// most s packets in flight, clocked by the results coming back, so a worker sends at
//   min(line rate at the packet's payload, s x payload / RTT)
// (also bounded by the switch's packet rate shared by the N workers).  The bucket crosses the
// switch in `pipeline_chunks` pieces: once every worker's packets of a piece have arrived, the
// switch multicasts the piece's sum to all workers, at the same packet rate, while the next pieces
// stream in.  After the last bucket is back, the optimizer steps on the GPU over all parameters.
// Earlier micro-batches of gradient accumulation only accumulate (no_sync), as in DDP.
#include <map>
#include <string>
#include <vector>

#include <simgrid/s4u/Actor.hpp>

#include "sim/countdown.hpp"
#include "sim/stream.hpp"
#include "sim/systems/systems.hpp"
#include "sim/transfers.hpp"

namespace luwu::sim {
namespace {

class SwitchMl : public Schedule {
 public:
  explicit SwitchMl(ClusterEnv& env) : env_(env), trace_(env.trace), world_(env.world()) {
    if (!env.roles.network_switch || !env.hw.network_switch)
      throw std::invalid_argument("switchml needs a programmable switch that aggregates between the workers");
    chunks_ = env.settings.pipeline_chunks;
    switch_ = env.roles.network_switch;

    // The buckets every rank fills in the same order (DDP's rule: a bucket goes when it is full).
    const int last_micro_step = trace_.training.grad_accum - 1;
    double filling = 0;
    std::size_t last_backward = 0;
    for (std::size_t i = 0; i < trace_.ops.size(); ++i) {
      const auto& op = trace_.ops[i];
      if (op.kind != workloads::OpKind::Backward || op.micro_step != last_micro_step || op.grad_bytes == 0) continue;
      filling += static_cast<double>(op.grad_bytes);
      last_backward = i;
      if (filling >= env.settings.bucket_bytes) {
        bucket_after_op_[i] = bucket_bytes_.size();
        bucket_bytes_.push_back(filling);
        filling = 0;
      }
    }
    if (filling > 0) {
      bucket_after_op_[last_backward] = bucket_bytes_.size();
      bucket_bytes_.push_back(filling);
    }
    for (std::size_t b = 0; b < bucket_bytes_.size(); ++b) {
      piece_arrivals_.emplace_back();
      for (int c = 0; c < chunks_; ++c) piece_arrivals_.back().push_back(std::make_shared<Countdown>(world_));
    }
    delivered_.assign(world_, {});
    for (int r = 0; r < world_; ++r)
      for (std::size_t b = 0; b < bucket_bytes_.size(); ++b) delivered_[r].push_back(std::make_shared<Countdown>(chunks_));

    const double rtt = 2 * env.traffic.route_latency_s(env.roles.ranks.front().gpu, switch_);
    const double payload = env.hw.network_switch->payload_bytes();
    aggregation_Bps_ =
        env.hw.network_switch->aggregation_throughput_Bps(rtt, env.hw.worker_nic.goodput_Bps(payload), world_);
  }

  void run_rank(RankEnv& env) override {
    GpuDevice& gpu = env.gpu;
    const int r = env.rank();
    Stream upload(gpu.name(), "gradient to switch (nic dma)", "communication", gpu.host(), &env_.timeline);
    for (std::size_t i = 0; i < trace_.ops.size(); ++i) {
      const auto& op = trace_.ops[i];
      gpu.compute(op_label(trace_, op), env.op_time_s(op));
      auto bucket = bucket_after_op_.find(i);
      if (bucket == bucket_after_op_.end()) continue;
      const std::size_t b = bucket->second;
      const double piece = bucket_bytes_[b] / chunks_ * wire_bytes_per_grad_byte();
      upload.enqueue("aggregate bucket " + std::to_string(b), [this, &env, b, piece] {
        GpuDevice::LoadScope dma(env.gpu, GpuDevice::LoadKind::NicDma);
        for (int c = 0; c < chunks_; ++c) {
          transfer(env.gpu.host(), switch_, piece, env_.traffic, aggregation_Bps_);
          arrive(b, c, piece);
        }
      });
    }
    for (std::size_t b = 0; b < bucket_bytes_.size(); ++b)
      gpu.wait(delivered_[r][b]->done(), WaitCause::Communication, "in-network all-reduce bucket " + std::to_string(b));
    gpu.optimizer_step("adam step", env.gpu_optimizer_time_s(static_cast<double>(trace_.total_params())));
  }

 private:
  double wire_bytes_per_grad_byte() const {
    return env_.settings.aggregation_element_bytes / workloads::bytes_per_element(trace_.training.dtype);
  }

  // One worker's packets of piece c of bucket b are in the switch; once every worker's are, the
  // switch multicasts the sum to all of them.
  void arrive(std::size_t b, int c, double piece) {
    auto& all = piece_arrivals_[b][c];
    all->arrive();
    if (!all->done()->done()) return;
    for (int r = 0; r < world_; ++r)
      simgrid::s4u::Actor::create("multicast leg", switch_, [this, r, b, piece] {
        GpuDevice::LoadScope dma(*env_.gpus[r], GpuDevice::LoadKind::NicDma);
        transfer(switch_, env_.roles.ranks[r].gpu, piece, env_.traffic, aggregation_Bps_);
        delivered_[r][b]->arrive();
      });
  }

  ClusterEnv& env_;
  const workloads::Trace& trace_;
  const int world_;
  int chunks_ = 1;
  double aggregation_Bps_ = 0;
  simgrid::s4u::Host* switch_ = nullptr;
  std::map<std::size_t, std::size_t> bucket_after_op_;  // [op]: the bucket that is full after it
  std::vector<double> bucket_bytes_;                    // [bucket]: gradient bytes (training dtype)
  std::vector<std::vector<std::shared_ptr<Countdown>>> piece_arrivals_;  // [bucket][piece]: workers arrived
  std::vector<std::vector<std::shared_ptr<Countdown>>> delivered_;       // [rank][bucket]: pieces back
};

}  // namespace

std::unique_ptr<Schedule> make_switchml_schedule(ClusterEnv& env) { return std::make_unique<SwitchMl>(env); }

}  // namespace luwu::sim
