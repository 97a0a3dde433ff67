#include "sim/engine/model_parallel_comm.hpp"

#include <stdexcept>

#include <fmt/format.h>
#include <simgrid/s4u/Engine.hpp>

#include "sim/engine/transfers.hpp"

namespace luwu::sim {

ParallelCoords parallel_coords(const workloads::ParallelLayout& layout, int rank) {
  ParallelCoords c;
  c.tensor = rank % layout.tensor;
  c.data = (rank / layout.tensor) % layout.data;
  c.stage = rank / (layout.tensor * layout.data);
  return c;
}

int parallel_rank(const workloads::ParallelLayout& layout, ParallelCoords c) {
  return c.tensor + layout.tensor * (c.data + layout.data * c.stage);
}

ModelParallelComm::ModelParallelComm(const workloads::ParallelLayout& layout,
                                     std::vector<simgrid::s4u::Host*> gpu_hosts, const std::vector<int>& server_of_rank,
                                     CollectiveContext context)
    : layout_(layout), hosts_(std::move(gpu_hosts)), context_(context) {
  if (static_cast<long long>(hosts_.size()) != layout_.gpus())
    throw std::invalid_argument(fmt::format("a {} x {} x {} layout needs {} GPUs, the cluster has {}", layout_.tensor,
                                            layout_.pipeline, layout_.data, layout_.gpus(), hosts_.size()));
  for (int p = 0; p < layout_.pipeline; ++p)
    for (int d = 0; d < layout_.data; ++d) {
      CommGroup group{fmt::format("tp/d{}/p{}", d, p), {}, {}};
      bool one_server = true;
      for (int t = 0; t < layout_.tensor; ++t) {
        const int r = parallel_rank(layout_, {t, d, p});
        group.members.push_back(hosts_[r]);
        one_server = one_server && server_of_rank.at(static_cast<std::size_t>(r)) ==
                                       server_of_rank.at(static_cast<std::size_t>(parallel_rank(layout_, {0, d, p})));
      }
      if (one_server) group.nccl = context_.intra_server;
      tensor_groups_.push_back(std::move(group));
    }
  for (std::size_t r = 0; r < hosts_.size(); ++r) {
    activations_.push_back(std::make_unique<Port>());
    gradients_.push_back(std::make_unique<Port>());
    expert_ports_.emplace_back();
    if (layout_.expert > 1)
      for (int i = 0; i < layout_.expert; ++i) expert_ports_.back().push_back(std::make_unique<Port>());
  }
}

void ModelParallelComm::run(const workloads::TraceOp& op, int rank, GpuDevice& gpu) {
  using workloads::OpKind;
  const ParallelCoords c = parallel_coords(layout_, rank);
  const double start = simgrid::s4u::Engine::get_clock();
  const double bytes = static_cast<double>(op.comm_bytes);
  switch (op.kind) {
    case OpKind::TensorAllReduce:
    case OpKind::TensorReduceScatter:
    case OpKind::TensorAllGather: tensor_collective(op.kind, rank, bytes); break;
    case OpKind::SendActivation: send(rank, neighbour(c, +1), activations_, bytes); break;
    case OpKind::SendGradient: send(rank, neighbour(c, -1), gradients_, bytes); break;
    case OpKind::RecvActivation: receive(*activations_[static_cast<std::size_t>(rank)]); break;
    case OpKind::RecvGradient: receive(*gradients_[static_cast<std::size_t>(rank)]); break;
    case OpKind::ExpertAllToAll: expert_all_to_all(rank, bytes); break;
    default: throw std::logic_error("ModelParallelComm::run: " + workloads::to_string(op.kind) + " is compute");
  }
  gpu.account_wait(WaitCause::Communication, workloads::to_string(op.kind), start);
  const double waited = simgrid::s4u::Engine::get_clock() - start;
  (op.kind == OpKind::ExpertAllToAll               ? gpu.times().expert_all_to_all_s
   : workloads::is_tensor_collective(op.kind) ? gpu.times().tensor_collective_s
                                              : gpu.times().pipeline_wait_s) += waited;
}

int ModelParallelComm::neighbour(ParallelCoords c, int direction) const {
  int stage = c.stage + direction;
  // Interleaved, the last stage's chunk feeds the first stage's next chunk, and back.
  if (layout_.interleaved()) stage = (stage + layout_.pipeline) % layout_.pipeline;
  if (stage < 0 || stage >= layout_.pipeline) return -1;
  return parallel_rank(layout_, {c.tensor, c.data, stage});
}

void ModelParallelComm::tensor_collective(workloads::OpKind kind, int rank, double bytes) {
  const ParallelCoords c = parallel_coords(layout_, rank);
  const CommGroup& group = tensor_groups_[static_cast<std::size_t>(c.data + layout_.data * c.stage)];
  switch (kind) {
    case workloads::OpKind::TensorAllReduce: ring_all_reduce(group, c.tensor, bytes, context_); break;
    case workloads::OpKind::TensorReduceScatter: ring_reduce_scatter(group, c.tensor, bytes, context_); break;
    default: ring_all_gather(group, c.tensor, bytes, context_); break;
  }
}

void ModelParallelComm::expert_all_to_all(int rank, double bytes) {
  if (layout_.expert < 2) throw std::logic_error("an expert all-to-all in a layout without expert parallelism");
  const ParallelCoords c = parallel_coords(layout_, rank);
  const int first = c.data - c.data % layout_.expert, index = c.data % layout_.expert;
  const double share = bytes / layout_.expert;
  for (int j = 0; j < layout_.expert; ++j) {
    if (j == index) continue;
    const int peer = parallel_rank(layout_, {c.tensor, first + j, c.stage});
    send(rank, peer, *expert_ports_[static_cast<std::size_t>(peer)][static_cast<std::size_t>(index)], share);
  }
  for (int j = 0; j < layout_.expert; ++j)
    if (j != index) receive(*expert_ports_[static_cast<std::size_t>(rank)][static_cast<std::size_t>(j)]);
}

void ModelParallelComm::send(int from, int to, std::vector<std::unique_ptr<Port>>& ports, double bytes) {
  // Checked before the port is looked up: a trace that sends past the first or last stage is a bug.
  if (to < 0 || static_cast<std::size_t>(to) >= hosts_.size())
    throw std::logic_error(fmt::format("rank {} sends to a pipeline stage that does not exist", from));
  send(from, to, *ports[static_cast<std::size_t>(to)], bytes);
}

void ModelParallelComm::send(int from, int to, Port& port, double bytes) {
  auto flow = start_transfer(hosts_[static_cast<std::size_t>(from)], hosts_[static_cast<std::size_t>(to)], bytes,
                             *context_.traffic);
  std::unique_lock lock(*port.mutex);
  port.flows.push_back(std::move(flow));
  port.arrived->notify_all();
}

void ModelParallelComm::receive(Port& port) {
  simgrid::s4u::CommPtr flow;
  {
    std::unique_lock lock(*port.mutex);
    port.arrived->wait(lock, [&port] { return !port.flows.empty(); });
    flow = std::move(port.flows.front());
    port.flows.pop_front();
  }
  flow->wait();
}

}  // namespace luwu::sim
