#pragma once
// The communication of tensor and pipeline parallelism that a stage trace names
// (workloads/stage_trace.hpp): a GPU's tensor collectives over its tensor-parallel group, and its
// activation and gradient transfers to the neighbouring pipeline stages.  The training system
// never sees these: it reduces gradients over the data-parallel group only.
//
// Ranks follow Megatron-LM's default order (tensor innermost, then data, pipeline outermost:
// megatron/core/parallel_state.py, order "tp-dp-pp"):
//   rank = t + T * (d + D * p)
// so a tensor-parallel group is T consecutive GPUs (one server's NVLink domain when T is its GPU
// count) and a data-parallel group takes one GPU from each of D servers.
//
// Tensor collectives run on the compute stream and block it, as Megatron-LM runs them (a ring over
// the group, detailed or coarse as the data-parallel collectives are).  A pipeline send starts its
// flow at once and does not block the sender's stream; the receiver blocks until the next
// transfer of that kind from its neighbour has arrived (transfers of one kind between two stages
// arrive in the order they were sent, as NCCL's point-to-point calls on one stream do).  With the
// interleaved schedule the last stage's neighbour onward is the first stage, and back.  Megatron-
// LM's batched send-and-receive also holds the sender until its send is done; the sender here
// goes on, so a stage never waits for its neighbour to post a receive.
#include <deque>
#include <memory>
#include <string>
#include <vector>

#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/ConditionVariable.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Mutex.hpp>

#include "sim/engine/collectives.hpp"
#include "sim/engine/gpu_device.hpp"
#include "workloads/parallel_layout.hpp"
#include "workloads/trace.hpp"

namespace luwu::sim {

// A rank's place in the layout.
struct ParallelCoords {
  int tensor = 0;
  int data = 0;
  int stage = 0;
};

ParallelCoords parallel_coords(const workloads::ParallelLayout& layout, int rank);
int parallel_rank(const workloads::ParallelLayout& layout, ParallelCoords coords);

class ModelParallelComm {
 public:
  // gpu_hosts: every rank's GPU, by rank (layout.gpus() of them); server_of_rank: each rank's
  // server (a tensor group inside one gets context.intra_server, NCCL's ring on its NVLink).
  ModelParallelComm(const workloads::ParallelLayout& layout, std::vector<simgrid::s4u::Host*> gpu_hosts,
                    const std::vector<int>& server_of_rank, CollectiveContext context);

  const workloads::ParallelLayout& layout() const { return layout_; }
  // Runs a tensor collective or a pipeline transfer of rank `rank` (called from its actor), charging
  // the compute stream's wait to communication.
  void run(const workloads::TraceOp& op, int rank, GpuDevice& gpu);

 private:
  struct Port {  // transfers of one kind on their way to one rank
    simgrid::s4u::MutexPtr mutex = simgrid::s4u::Mutex::create();
    simgrid::s4u::ConditionVariablePtr arrived = simgrid::s4u::ConditionVariable::create();
    std::deque<simgrid::s4u::CommPtr> flows;
  };
  void tensor_collective(workloads::OpKind kind, int rank, double bytes);
  // An all-to-all over the rank's expert-parallel group (`expert` consecutive data-parallel ranks of
  // its stage): a flow of bytes / expert to each other member, all at once, as NCCL's grouped sends
  // and receives run it; the rank goes on once its own flows are out and every member's to it in.
  void expert_all_to_all(int rank, double bytes);
  // The rank of the same tensor and data index one stage on (+1) or back (-1), -1 past either end.
  int neighbour(ParallelCoords c, int direction) const;
  // A flow from rank `from` to rank `to`, queued at `to`'s port of that kind (ports: by rank).
  void send(int from, int to, std::vector<std::unique_ptr<Port>>& ports, double bytes);
  void send(int from, int to, Port& port, double bytes);
  void receive(Port& port);

  workloads::ParallelLayout layout_;
  std::vector<simgrid::s4u::Host*> hosts_;
  CollectiveContext context_;
  std::vector<CommGroup> tensor_groups_;  // by (data, stage): index d + D * p
  std::vector<std::unique_ptr<Port>> activations_, gradients_;  // by receiving rank
  // Expert all-to-alls: by receiving rank, then by the sender's index in their group (one port per
  // sender keeps each sender's flows in order, so a fast member's next all-to-all never stands in
  // for a slow member's current one).
  std::vector<std::vector<std::unique_ptr<Port>>> expert_ports_;
};

}  // namespace luwu::sim
