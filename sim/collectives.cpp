#include "sim/collectives.hpp"

#include <cmath>
#include <cstdint>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>

namespace luwu::sim {
namespace {

int payload_token = 0;  // collectives move no real data; the mailboxes need a pointer

simgrid::s4u::Mailbox* mailbox_of(const CommGroup& group, int index) {
  return simgrid::s4u::Mailbox::by_name(group.name + "#" + std::to_string(index));
}

std::uint64_t whole_bytes(double bytes) { return static_cast<std::uint64_t>(std::ceil(bytes)); }

// `steps` ring steps of `step_bytes` each: send to the next rank, receive from the previous one.
void ring_pass(const CommGroup& group, int index, int steps, double step_bytes, const CollectiveContext& ctx) {
  const int n = group.size();
  if (n <= 1 || steps <= 0 || step_bytes <= 0) return;
  auto* to_next = mailbox_of(group, (index + 1) % n);
  auto* mine = mailbox_of(group, index);
  const auto* self = group.members[index];
  const auto* next = group.members[(index + 1) % n];

  if (ctx.mode == CollectiveMode::Detailed) {
    for (int step = 0; step < steps; ++step) {
      auto send = to_next->put_async(&payload_token, whole_bytes(step_bytes));
      mine->get<int>();
      send->wait();
      ctx.traffic->record_flow(self, next, step_bytes);
    }
    return;
  }
  // Coarse: all steps as one flow; the other steps' latencies are paid once more each.
  const double total = steps * step_bytes;
  auto send = to_next->put_async(&payload_token, whole_bytes(total));
  mine->get<int>();
  send->wait();
  ctx.traffic->record_flow(self, next, total);
  simgrid::s4u::this_actor::sleep_for((steps - 1) * ctx.traffic->route_latency_s(self, next));
}

}  // namespace

void ring_all_gather(const CommGroup& group, int index, double buffer_bytes, const CollectiveContext& ctx) {
  const int n = group.size();
  ring_pass(group, index, n - 1, buffer_bytes / n, ctx);
}

void ring_reduce_scatter(const CommGroup& group, int index, double buffer_bytes, const CollectiveContext& ctx) {
  const int n = group.size();
  ring_pass(group, index, n - 1, buffer_bytes / n, ctx);
}

void ring_all_reduce(const CommGroup& group, int index, double buffer_bytes, const CollectiveContext& ctx) {
  const int n = group.size();
  ring_pass(group, index, 2 * (n - 1), buffer_bytes / n, ctx);
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
