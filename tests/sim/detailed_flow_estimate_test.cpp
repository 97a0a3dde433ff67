// The cost estimate of detailed collectives (sim/experiment/run_scenario.hpp): ring collectives
// counted from the trace as ZeRO-3 issues them, N(N-1) flows each in detailed mode, N coarse.
#include <doctest/doctest.h>

#include "sim/experiment/run_scenario.hpp"
#include "workloads/trace.hpp"

using namespace luwu;

namespace {

workloads::TraceOp op(workloads::OpKind kind, std::uint64_t param_bytes, std::uint64_t grad_bytes) {
  workloads::TraceOp o;
  o.kind = kind;
  o.param_bytes = param_bytes;
  o.grad_bytes = grad_bytes;
  return o;
}

}  // namespace

TEST_CASE("detailed collectives are estimated at one all-gather per parameter read and one reduce-scatter per gradient") {
  using workloads::OpKind;
  workloads::Trace trace;
  // Three layers, the middle one without parameters; recompute of the first.
  trace.ops = {op(OpKind::Forward, 100, 0),  op(OpKind::Forward, 0, 0),   op(OpKind::Forward, 50, 0),
               op(OpKind::Backward, 50, 50), op(OpKind::Backward, 0, 0),  op(OpKind::Recompute, 100, 0),
               op(OpKind::Backward, 100, 100)};
  // Parameter reads: 2 forward + 2 backward + 1 recompute = 5 all-gathers; gradients: 2 reduce-scatters.
  const auto e = sim::estimate_detailed_flows(trace, 16);
  CHECK(e.collectives == 7);
  CHECK(e.detailed_flows == 7.0L * 16 * 15);
  CHECK(e.coarse_flows == 7.0L * 16);
  // One rank: no ring steps at all.
  CHECK(sim::estimate_detailed_flows(trace, 1).detailed_flows == 0);
}
