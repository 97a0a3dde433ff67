#include "workloads/trace.hpp"

#include <algorithm>
#include <stdexcept>

namespace luwu::workloads {

std::string to_string(OpKind k) {
  switch (k) {
    case OpKind::Forward: return "forward";
    case OpKind::Recompute: return "recompute";
    case OpKind::Backward: return "backward";
    case OpKind::TensorAllReduce: return "tensor-all-reduce";
    case OpKind::TensorReduceScatter: return "tensor-reduce-scatter";
    case OpKind::TensorAllGather: return "tensor-all-gather";
    case OpKind::SendActivation: return "send-activation";
    case OpKind::RecvActivation: return "recv-activation";
    case OpKind::SendGradient: return "send-gradient";
    case OpKind::RecvGradient: return "recv-gradient";
    case OpKind::ExpertAllToAll: return "expert-all-to-all";
  }
  return "?";
}

std::uint64_t Trace::total_params() const {
  std::uint64_t sum = 0;
  for (const auto& l : layers) sum += l.params;
  return sum;
}

std::uint64_t Trace::kernel_count() const {
  std::uint64_t n = 0;
  for (const auto& op : ops) n += kernels_of(op).size();
  return n;
}

std::uint64_t Trace::comm_bytes_of(OpKind kind) const {
  std::uint64_t sum = 0;
  for (const auto& op : ops)
    if (op.kind == kind) sum += op.comm_bytes;
  return sum;
}

double Trace::flops_per_iteration() const {
  double sum = 0;
  for (const auto& op : ops) sum += op.flops;
  return sum;
}

double Trace::flops_of(OpKind kind) const {
  double sum = 0;
  for (const auto& op : ops)
    if (op.kind == kind) sum += op.flops;
  return sum;
}

double Trace::model_flops() const {
  double padding = 0;  // per block forward: what the capacity factor's padded rows multiply
  if (model.moe() && training.expert_capacity_factor != 1.0) {
    TrainingConfig balanced = training;
    balanced.expert_capacity_factor = 1.0;
    const TensorSharding tp = layout.sharding();
    padding = sharded_layer_info(model, training, tp, LayerKind::Transformer).forward_flops -
              sharded_layer_info(model, balanced, tp, LayerKind::Transformer).forward_flops;
  }
  double sum = 0;
  for (const auto& op : ops) {
    if (op.kind != OpKind::Forward && op.kind != OpKind::Backward) continue;
    const LayerInfo& layer = layers.at(static_cast<std::size_t>(op.layer));
    const bool block = layer.kind == LayerKind::Transformer && !layer.dense_ffn;  // a block with experts
    sum += op.flops - (block ? (op.kind == OpKind::Backward ? 2 : 1) * padding : 0);
  }
  return sum;
}

double Trace::tokens_per_iteration() const {
  return static_cast<double>(training.micro_batch) * training.seq_len * training.grad_accum;
}

std::uint64_t Trace::param_bytes() const { return total_params() * bytes_per_element(training.dtype); }

std::uint64_t Trace::peak_activation_bytes() const {
  // Signed: a hand-written trace may free before it saves; the peak is still the highest level.
  long double level = 0, peak = 0;
  for (const auto& op : ops) {
    level += static_cast<long double>(op.act_saved_bytes);
    peak = std::max(peak, level);
    level -= static_cast<long double>(op.act_freed_bytes);
  }
  return static_cast<std::uint64_t>(peak);
}

void validate_training(const ModelConfig& model, const TrainingConfig& t) {
  auto check_range = [](const char* what, int value, int max) {
    if (value < 1 || value > max)
      throw std::invalid_argument(std::string(what) + " must be in [1, " + std::to_string(max) + "], got " +
                                  std::to_string(value));
  };
  check_range("micro-batch", t.micro_batch, kMaxMicroBatch);
  check_range("grad-accum", t.grad_accum, kMaxGradAccum);
  check_range("sequence length", t.seq_len, kMaxSeqLen);
  if (t.attention_score_passes < 0 || t.attention_score_passes > kMaxAttentionScorePasses)
    throw std::invalid_argument("attention score passes must be in [0, " + std::to_string(kMaxAttentionScorePasses) +
                                "], got " + std::to_string(t.attention_score_passes));
  if (t.attention_layout_copies < 0 || t.attention_layout_copies > kMaxAttentionLayoutCopies)
    throw std::invalid_argument("attention layout copies must be in [0, " + std::to_string(kMaxAttentionLayoutCopies) +
                                "], got " + std::to_string(t.attention_layout_copies));
  if (t.seq_len > model.max_seq)
    throw std::invalid_argument("sequence length " + std::to_string(t.seq_len) + " exceeds " + model.name +
                                "'s max_seq " + std::to_string(model.max_seq));
  // Byte counts are exact 64-bit integers (layer_accounting.cpp): refuse settings whose
  // activations could not be counted.  A generous bound per layer: 4 B x tokens x (12 h + 3 f + V)
  // plus 5 B x heads x s^2 x b of attention scores and masks.
  const long double b = t.micro_batch, s = t.seq_len, tokens = b * s;
  const long double expert_copies =
      model.moe() ? model.experts_per_token * t.expert_capacity_factor + model.shared_experts + 1.0L : 1.0L;
  const long double ffn_width = std::max(model.ffn_hidden, model.expert_width());
  const long double per_layer =
      4.0L * tokens * (12.0L * model.hidden + 3.0L * ffn_width * expert_copies + 2.0L * model.hidden * expert_copies +
                       model.experts + model.vocab) +
      5.0L * model.heads * s * s * b;
  if (per_layer * (model.layers + 2.0L) >= 0x1p62L)
    throw std::invalid_argument("micro-batch " + std::to_string(t.micro_batch) + " x sequence " +
                                std::to_string(t.seq_len) + ": activations beyond 2^62 bytes, more than luwusim counts");
  // The trace lists every op of every micro-batch.
  if (static_cast<long double>(t.grad_accum) * (model.layers + 2.0L) * 3 > static_cast<long double>(kMaxTraceOps))
    throw std::invalid_argument("grad-accum " + std::to_string(t.grad_accum) + ": the trace would list more than " +
                                std::to_string(kMaxTraceOps) + " ops (about 100 B each in memory)");
}

namespace {

// The kernel list of each (layer kind, op kind) pair, built once and shared by every op of it.
class KernelLists {
 public:
  KernelLists(const ModelConfig& model, const TrainingConfig& training, const TensorSharding& sharding,
              std::vector<std::vector<Kernel>>& lists)
      : model_(model), training_(training), sharding_(sharding), lists_(lists) {}

  int index(const LayerInfo& layer, OpKind op) {
    if (!is_compute(op)) {  // communication launches no kernels here
      if (empty_ < 0) {
        empty_ = static_cast<int>(lists_.size());
        lists_.emplace_back();
      }
      return empty_;
    }
    if (op == OpKind::Recompute) op = OpKind::Forward;  // the same kernels again
    // A mixture's dense blocks have their own lists (slot 3).
    const int kind = layer.dense_ffn ? 3 : static_cast<int>(layer.kind);
    int& slot = index_[kind][op == OpKind::Backward ? 1 : 0];
    if (slot < 0) {
      slot = static_cast<int>(lists_.size());
      lists_.push_back(
          layer_kernels(layer.dense_ffn ? model_.with_dense_ffn() : model_, training_, layer.kind, op, sharding_));
    }
    return slot;
  }

 private:
  const ModelConfig& model_;
  const TrainingConfig& training_;
  TensorSharding sharding_;
  std::vector<std::vector<Kernel>>& lists_;
  int index_[4][2] = {{-1, -1}, {-1, -1}, {-1, -1}, {-1, -1}};
  int empty_ = -1;
};

}  // namespace

void assign_kernels(Trace& trace) {
  trace.kernel_lists.clear();
  KernelLists lists(trace.model, trace.training, trace.layout.sharding(), trace.kernel_lists);
  for (auto& op : trace.ops) op.kernels = lists.index(trace.layers.at(static_cast<std::size_t>(op.layer)), op.kind);
}

Trace generate_trace(const ModelConfig& model, const TrainingConfig& training) {
  validate_training(model, training);
  Trace trace;
  trace.model = model;
  trace.training = training;
  trace.layers = layer_infos(model, training);
  const std::uint64_t e = bytes_per_element(training.dtype);
  const int n = static_cast<int>(trace.layers.size());

  auto recomputed = [&](const LayerInfo& l) { return training.recompute && l.kind == LayerKind::Transformer; };
  auto kept_in_forward = [&](const LayerInfo& l) {
    return recomputed(l) ? l.checkpoint_bytes : l.activation_bytes;
  };

  trace.ops.reserve(static_cast<std::size_t>(training.grad_accum) * n * (training.recompute ? 3 : 2));
  for (int step = 0; step < training.grad_accum; ++step) {
    for (int i = 0; i < n; ++i) {
      const LayerInfo& l = trace.layers[i];
      trace.ops.push_back(
          {OpKind::Forward, i, step, l.forward_flops, l.params_used * e, 0, kept_in_forward(l), 0});
    }
    for (int i = n - 1; i >= 0; --i) {
      const LayerInfo& l = trace.layers[i];
      std::uint64_t held = kept_in_forward(l);
      if (recomputed(l)) {
        trace.ops.push_back(
            {OpKind::Recompute, i, step, l.forward_flops, l.params_used * e, 0, l.activation_bytes, 0});
        held += l.activation_bytes;
      }
      trace.ops.push_back(
          {OpKind::Backward, i, step, l.backward_flops, l.params_used * e, l.params * e, 0, held});
    }
  }
  assign_kernels(trace);
  return trace;
}

}  // namespace luwu::workloads
