#pragma once
// Parameter prefetch for systems that keep no full copy of the model on the GPU (ZeRO-3,
// ZeRO-Infinity): the parameters of each op that needs them are fetched in op order, `depth`
// such ops ahead of the one computing (DeepSpeed's prefetch, ZeRO-3 paper section 7: depth 1 =
// fetch layer l+1 while layer l computes).
#include <cstddef>
#include <functional>
#include <utility>
#include <vector>

#include "workloads/trace.hpp"

namespace luwu::sim {

// Ops whose parameters must be brought to the GPU first: the forward of each layer, and the first
// op of each layer in backward (recompute then backward reuse them).
inline std::vector<bool> ops_needing_params(const workloads::Trace& trace) {
  std::vector<bool> needs(trace.ops.size());
  for (std::size_t i = 0; i < trace.ops.size(); ++i) {
    const auto& op = trace.ops[i];
    bool reuses = op.kind == workloads::OpKind::Backward && i > 0 &&
                  trace.ops[i - 1].kind == workloads::OpKind::Recompute && trace.ops[i - 1].layer == op.layer;
    needs[i] = op.param_bytes > 0 && !reuses;
  }
  return needs;
}

// The indices of those ops, in order.
inline std::vector<std::size_t> param_ops(const workloads::Trace& trace) {
  const auto needs = ops_needing_params(trace);
  std::vector<std::size_t> ops;
  for (std::size_t i = 0; i < needs.size(); ++i)
    if (needs[i]) ops.push_back(i);
  return ops;
}

class ParamPrefetch {
 public:
  // `fetch(op)` issues the fetch of op's parameters (it returns at once: the work goes on streams).
  ParamPrefetch(const workloads::Trace& trace, int depth, std::function<void(std::size_t op)> fetch)
      : needs_(ops_needing_params(trace)), depth_(static_cast<std::size_t>(depth)), fetch_(std::move(fetch)) {
    for (std::size_t i = 0; i < needs_.size(); ++i)
      if (needs_[i]) ops_.push_back(i);
  }

  // Called before op `op` computes: issues every fetch now due; true when `op` needs parameters.
  bool before(std::size_t op) {
    if (!needs_[op]) return false;
    const std::size_t due = std::min(++needed_ + depth_, ops_.size());
    for (; issued_ < due; ++issued_) fetch_(ops_[issued_]);
    return true;
  }

 private:
  std::vector<bool> needs_;
  std::vector<std::size_t> ops_;
  std::size_t depth_;
  std::function<void(std::size_t)> fetch_;
  std::size_t needed_ = 0, issued_ = 0;
};

}  // namespace luwu::sim
