#include "sim/engine/pat_collectives.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Mailbox.hpp>

#include "sim/engine/collective_tuning.hpp"
#include "sim/engine/pacing_host.hpp"

namespace luwu::sim {
namespace {

int pat_payload_token = 0;  // collectives move no real data; the mailboxes need a pointer

// One mailbox per (group, step, receiver): a step's partner differs from the next step's, so a
// rank's messages of two steps may arrive in either order; per-step mailboxes keep them apart.
simgrid::s4u::Mailbox* step_mailbox(const CommGroup& group, int step, int index) {
  return simgrid::s4u::Mailbox::by_name(group.name + "#pat" + std::to_string(step) + "#" + std::to_string(index));
}

std::uint64_t whole_bytes(double bytes) { return static_cast<std::uint64_t>(std::ceil(bytes)); }

// A PAT step: send `shards` shards of `shard_bytes` to the rank `distance` away in direction
// `sign`, receive as many from the rank `distance` away the other way.
struct Step {
  int distance;
  int shards;
};

// The steps in time order: all-gather's (farthest dimension first), reversed for reduce-scatter.
std::vector<Step> steps_of(int n, bool reduce_scatter) {
  std::vector<Step> steps;
  const std::vector<int> shards = pat_all_gather_shards_per_step(n);
  const int count = static_cast<int>(shards.size());
  for (int k = 0; k < count; ++k) steps.push_back({1 << (count - 1 - k), shards[static_cast<std::size_t>(k)]});
  if (reduce_scatter) std::reverse(steps.begin(), steps.end());
  return steps;
}

// All-gather data moves to the rank `distance` after; reduce-scatter's partial sums move back.
void pat_run(const CommGroup& group, int index, double buffer_bytes, bool reduce_scatter,
             const CollectiveContext& ctx) {
  const int members = group.size();
  const int n = group.ranks();  // a folded group's shards and steps are the represented group's
  if (members <= 1 || buffer_bytes <= 0) return;
  const double shard_bytes = buffer_bytes / n;
  const std::vector<Step> steps = steps_of(n, reduce_scatter);
  const int sign = reduce_scatter ? -1 : 1;
  auto peer = [&](int distance) { return ((index + sign * distance) % members + members) % members; };
  const auto* self = group.members[static_cast<std::size_t>(index)];

  // A folded group's partners at distance 2^k are not its members: it runs the coarse form.
  if (ctx.mode == CollectiveMode::Detailed && n == members) {
    for (std::size_t k = 0; k < steps.size(); ++k) {
      const int to = peer(steps[k].distance);
      const double bytes = steps[k].shards * shard_bytes;
      auto kernel_pace = start_paced(group.engine_of(index), bytes);
      auto send = step_mailbox(group, static_cast<int>(k), to)->put_async(&pat_payload_token, whole_bytes(bytes));
      step_mailbox(group, static_cast<int>(k), index)->get<int>();
      send->wait();
      wait_paced(kernel_pace);
      ctx.traffic->record_flow(self, group.members[static_cast<std::size_t>(to)], bytes, send);
    }
    return;
  }
  // Coarse: the N-1 shards as one flow to the dimension-0 partner (the largest step's); the other
  // steps' latencies are paid once more each.
  const int to = peer(1);
  const double total = (n - 1) * shard_bytes;
  auto kernel_pace = start_paced(group.engine_of(index), total);
  auto send = step_mailbox(group, 0, to)->put_async(&pat_payload_token, whole_bytes(total));
  step_mailbox(group, 0, index)->get<int>();
  send->wait();
  wait_paced(kernel_pace);
  const auto* next = group.members[static_cast<std::size_t>(to)];
  ctx.traffic->record_flow(self, next, total, send);
  simgrid::s4u::this_actor::sleep_for((static_cast<int>(steps.size()) - 1) * ctx.traffic->route_latency_s(self, next));
}

}  // namespace

int pat_step_count(int n) { return ceil_log2(n); }

std::vector<int> pat_all_gather_shards_per_step(int n) {
  // At dimension d (distance 2^d) the sender holds the offsets made of bits above d (multiples of
  // 2^(d+1) below n); the receiver lacks those plus 2^d, where they stay below n.
  std::vector<int> shards;
  for (int d = pat_step_count(n) - 1; d >= 0; --d) {
    const int distance = 1 << d;
    shards.push_back((n - 1 - distance) / (2 * distance) + 1);
  }
  return shards;
}

void pat_all_gather(const CommGroup& group, int index, double buffer_bytes, const CollectiveContext& ctx) {
  pat_run(group, index, buffer_bytes, false, ctx);
}

void pat_reduce_scatter(const CommGroup& group, int index, double buffer_bytes, const CollectiveContext& ctx) {
  pat_run(group, index, buffer_bytes, true, ctx);
}

}  // namespace luwu::sim
