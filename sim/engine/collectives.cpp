#include "sim/engine/collectives.hpp"
#include "sim/engine/pacing_host.hpp"
#include "sim/engine/transfers.hpp"

#include <cmath>
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Exec.hpp>
#include <simgrid/s4u/Semaphore.hpp>

namespace luwu::sim {
namespace {

int payload_token = 0;  // collectives move no real data; the mailboxes need a pointer

simgrid::s4u::Mailbox* mailbox_of(const CommGroup& group, int index) {
  return simgrid::s4u::Mailbox::by_name(group.name + "#" + std::to_string(index));
}

std::uint64_t whole_bytes(double bytes) { return static_cast<std::uint64_t>(std::ceil(bytes)); }

// The collective kernel's own pace for `bytes` of a send (CommGroup::engines), or nullptr.
simgrid::s4u::ExecPtr pace(const CommGroup& group, int index, double bytes) {
  return start_paced(group.engine_of(index), bytes);
}

// A folded ring's send waits for the left-out ranks' flows too (CommGroup::fold_shares): the
// slowest one's latency and bytes.
simgrid::s4u::ExecPtr fold_share_pace(const CommGroup& group, int index, double bytes) {
  auto* share = group.fold_share_of(index);
  if (share == nullptr || bytes <= 0) return nullptr;
  return start_paced(share, bytes + group.fold_share_latency_s * share->get_speed());
}

// `steps` ring steps of `step_bytes` each: send to the next rank, receive from the previous one.
// In `silent_step` (none when -1) this rank sends nothing (an empty message keeps the step's
// rendezvous with the next rank) and still receives, as the root of a chain reduce does.
void ring_pass(const CommGroup& group, int index, int steps, double step_bytes, const CollectiveContext& ctx,
               int silent_step = -1) {
  const int n = group.size();
  if (n <= 1 || steps <= 0 || step_bytes <= 0) return;
  auto* to_next = mailbox_of(group, (index + 1) % n);
  auto* mine = mailbox_of(group, index);
  const auto* self = group.members[index];
  const auto* next = group.members[(index + 1) % n];

  // Split flows (simulation.routing "spray", or "ecmp" with flow_splitting): the mailbox comm is
  // sub-flow 0 with its share, on the pair's ordinary route, and keeps the rendezvous with the
  // next rank; the sender starts the other sub-flows on their route variants at the same moment
  // and waits for them all.  The receiver waits for sub-flow 0 only, so a rank may begin its next
  // stage before a slower sub-flow into it lands; every sub-flow is waited by its sender, so the
  // collective's end (the last rank's) includes them all.
  const std::size_t sub_flows = sub_flows_between(self, next);
  auto send_piece = [&](double bytes, std::vector<simgrid::s4u::CommPtr>& extra) {
    const double share = bytes / static_cast<double>(sub_flows);
    auto send = to_next->put_async(&payload_token, whole_bytes(share));
    for (std::size_t i = 1; i < sub_flows; ++i)
      extra.push_back(start_sub_flow(const_cast<simgrid::s4u::Host*>(self), const_cast<simgrid::s4u::Host*>(next),
                                     share, *ctx.traffic, static_cast<unsigned>(i)));
    return send;
  };

  // NCCL's ring on this fabric (CommGroup::nccl): a fixed cost per step, and its bus bandwidth.
  const double step_overhead_s = group.nccl.overhead_s(step_bytes * group.ranks());
  auto put = [&](double bytes) {
    auto comm = to_next->put_init(&payload_token, whole_bytes(bytes));
    if (group.nccl.bus_Bps > 0) comm->set_rate(group.nccl.bus_Bps);
    comm->start();
    return comm;
  };

  if (ctx.mode == CollectiveMode::Detailed) {
    for (int step = 0; step < steps; ++step) {
      if (step_overhead_s > 0) simgrid::s4u::this_actor::sleep_for(step_overhead_s);
      if (step == silent_step) {
        auto empty = to_next->put_async(&payload_token, 0);
        mine->get<int>();
        empty->wait();
        continue;
      }
      auto kernel_pace = pace(group, index, step_bytes);
      auto left_out = fold_share_pace(group, index, step_bytes);
      std::vector<simgrid::s4u::CommPtr> extra;
      auto send = sub_flows > 1 ? send_piece(step_bytes, extra) : put(step_bytes);
      mine->get<int>();
      send->wait();
      for (auto& c : extra) c->wait();
      wait_paced(kernel_pace);
      wait_paced(left_out);
      ctx.traffic->record_flow(self, next, step_bytes / static_cast<double>(sub_flows), send);
    }
    return;
  }
  // Coarse: all steps as one flow; the other steps' latencies are paid once more each, and a
  // silent step lasts as long as one of the others (its predecessor's send).
  const bool silent = silent_step >= 0 && silent_step < steps;
  const int sending_steps = silent ? steps - 1 : steps;
  if (sending_steps <= 0) return;
  const double total = sending_steps * step_bytes;
  const double started = simgrid::s4u::Engine::get_clock();
  auto kernel_pace = pace(group, index, total);
  auto left_out = fold_share_pace(group, index, total);
  std::vector<simgrid::s4u::CommPtr> extra;
  auto send = sub_flows > 1 ? send_piece(total, extra) : put(total);
  mine->get<int>();
  send->wait();
  for (auto& c : extra) c->wait();
  wait_paced(kernel_pace);
  wait_paced(left_out);
  ctx.traffic->record_flow(self, next, total / static_cast<double>(sub_flows), send);
  const double latency_s = ctx.traffic->route_latency_s(self, next);
  const double silent_step_s =
      silent ? std::max(0.0, simgrid::s4u::Engine::get_clock() - started - latency_s) / sending_steps : 0;
  simgrid::s4u::this_actor::sleep_for((steps - 1) * latency_s + steps * step_overhead_s + silent_step_s);
}

}  // namespace

void ring_all_gather(const CommGroup& group, int index, double buffer_bytes, const CollectiveContext& ctx) {
  const int n = group.ranks();
  ring_pass(group, index, n - 1, buffer_bytes / n, ctx);
}

void ring_reduce_scatter(const CommGroup& group, int index, double buffer_bytes, const CollectiveContext& ctx) {
  const int n = group.ranks();
  ring_pass(group, index, n - 1, buffer_bytes / n, ctx);
}

void ring_all_reduce(const CommGroup& group, int index, double buffer_bytes, const CollectiveContext& ctx) {
  const int n = group.ranks();
  ring_pass(group, index, 2 * (n - 1), buffer_bytes / n, ctx);
}

void ring_reduce_to_owners(const CommGroup& group, int index, double buffer_bytes, const CollectiveContext& ctx) {
  const int n = group.ranks();
  ring_pass(group, index, n, buffer_bytes / n, ctx, /*silent_step=*/index);
}

void tree_all_reduce(const CommGroup& group, int index, double buffer_bytes, const CollectiveContext& ctx,
                     double chunk_bytes) {
  const int n = group.size();
  if (n <= 1 || buffer_bytes <= 0) return;
  // Coarse mode, or a folded group (whose tree is not the represented one's): the ring's time.
  if (ctx.mode == CollectiveMode::Coarse || group.ranks() != n) return ring_all_reduce(group, index, buffer_bytes, ctx);
  const int chunks = static_cast<int>(std::ceil(buffer_bytes / chunk_bytes));
  const double piece = buffer_bytes / chunks;
  const int parent = index == 0 ? -1 : (index - 1) / 2;
  std::vector<int> children;
  for (int c : {2 * index + 1, 2 * index + 2})
    if (c < n) children.push_back(c);
  // One mailbox per tree edge and direction, so chunks from two children never mix.
  auto up = [&](int child) { return simgrid::s4u::Mailbox::by_name(group.name + "#up#" + std::to_string(child)); };
  auto down = [&](int child) { return simgrid::s4u::Mailbox::by_name(group.name + "#down#" + std::to_string(child)); };
  auto* self = group.members[index];

  // The root broadcasts chunk c as soon as it has reduced it: a semaphore hands chunks from the
  // reducing actor (this one) to the broadcasting one.
  auto reduced = simgrid::s4u::Semaphore::create(0);
  const long owner = simgrid::s4u::this_actor::get_pid();  // the broadcaster's bytes are this rank's
  auto broadcaster = simgrid::s4u::Actor::create(group.name + " broadcast", self, [&, chunks, owner] {
    std::vector<simgrid::s4u::CommPtr> sends;
    std::vector<simgrid::s4u::ExecPtr> kernel_paces;
    for (int c = 0; c < chunks; ++c) {
      if (parent < 0)
        reduced->acquire();
      else
        down(index)->get<int>();
      for (int child : children) {
        kernel_paces.push_back(pace(group, index, piece));
        sends.push_back(down(child)->put_async(&payload_token, whole_bytes(piece)));
        ctx.traffic->record_flow(self, group.members[child], piece, sends.back(), owner);
      }
    }
    for (auto& send : sends) send->wait();
    for (auto& p : kernel_paces) wait_paced(p);
  });
  std::vector<simgrid::s4u::CommPtr> sends;
  std::vector<simgrid::s4u::ExecPtr> kernel_paces;
  int* received = nullptr;
  for (int c = 0; c < chunks; ++c) {
    std::vector<simgrid::s4u::CommPtr> gets;  // both children's chunk c at once
    for (int child : children) gets.push_back(up(child)->get_async<int>(&received));
    for (auto& get : gets) get->wait();
    if (parent < 0) {
      reduced->release();
      continue;
    }
    kernel_paces.push_back(pace(group, index, piece));
    sends.push_back(up(index)->put_async(&payload_token, whole_bytes(piece)));
    ctx.traffic->record_flow(self, group.members[parent], piece, sends.back());
  }
  for (auto& send : sends) send->wait();
  for (auto& p : kernel_paces) wait_paced(p);
  broadcaster->join();
}

namespace {

void in_network(const InNetworkGroup& g, int index, double up_bytes, double down_bytes, const CollectiveContext& ctx) {
  if (g.group.size() <= 1) return;
  auto* self = g.group.members[static_cast<std::size_t>(index)];
  g.arrived->wait();  // the switch reduces once every member streams in
  auto paced_send = start_paced(g.group.engine_of(index), up_bytes);
  auto up = start_transfer(self, g.aggregator, up_bytes, *ctx.traffic);
  auto down = start_transfer(g.aggregator, self, down_bytes, *ctx.traffic);
  up->wait();
  wait_paced(paced_send);
  g.arrived->wait();  // every contribution is in
  down->wait();
}

}  // namespace

void in_network_all_reduce(const InNetworkGroup& g, int index, double buffer_bytes, const CollectiveContext& ctx) {
  in_network(g, index, buffer_bytes, buffer_bytes, ctx);
}

void in_network_reduce_scatter(const InNetworkGroup& g, int index, double buffer_bytes,
                               const CollectiveContext& ctx) {
  in_network(g, index, buffer_bytes, buffer_bytes / g.group.ranks(), ctx);
}

void in_network_all_gather(const InNetworkGroup& g, int index, double buffer_bytes, const CollectiveContext& ctx) {
  in_network(g, index, buffer_bytes / g.group.ranks(), buffer_bytes, ctx);
}

void hierarchical_all_reduce(const CommGroup& local, int local_index, const CommGroup& cross, int cross_index,
                             double buffer_bytes, const CollectiveContext& ctx) {
  ring_reduce_scatter(local, local_index, buffer_bytes, ctx);
  ring_all_reduce(cross, cross_index, buffer_bytes / local.size(), ctx);
  ring_all_gather(local, local_index, buffer_bytes, ctx);
}

void hierarchical_all_gather(const CommGroup& local, int local_index, const CommGroup& cross, int cross_index,
                             double buffer_bytes, const CollectiveContext& ctx) {
  ring_all_gather(cross, cross_index, buffer_bytes / local.size(), ctx);
  ring_all_gather(local, local_index, buffer_bytes, ctx);
}

void hierarchical_reduce_scatter(const CommGroup& local, int local_index, const CommGroup& cross,
                                 int cross_index, double buffer_bytes, const CollectiveContext& ctx) {
  ring_reduce_scatter(local, local_index, buffer_bytes, ctx);
  ring_reduce_scatter(cross, cross_index, buffer_bytes / local.size(), ctx);
}

}  // namespace luwu::sim
