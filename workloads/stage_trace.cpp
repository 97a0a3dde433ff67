#include "workloads/stage_trace.hpp"

#include <stdexcept>

#include "workloads/pipeline_schedule.hpp"
#include "workloads/tensor_collectives.hpp"

namespace luwu::workloads {

std::vector<LayerInfo> stage_layer_infos(const ModelConfig& model, const TrainingConfig& training,
                                         const ParallelLayout& layout, int stage) {
  const StageBlocks blocks = stage_blocks(model.layers, layout.pipeline, stage);
  const TensorSharding sharding = layout.sharding();
  std::vector<LayerInfo> layers;
  layers.reserve(static_cast<std::size_t>(blocks.count) + 2);
  if (stage == 0) layers.push_back(sharded_layer_info(model, training, sharding, LayerKind::Embedding));
  LayerInfo block = sharded_layer_info(model, training, sharding, LayerKind::Transformer);
  for (int i = 0; i < blocks.count; ++i) {
    block.name = "block_" + std::to_string(blocks.first + i);
    layers.push_back(block);
  }
  // The last stage keeps its own copy of a tied matrix when the embedding is elsewhere.
  if (stage == layout.pipeline - 1)
    layers.push_back(sharded_layer_info(model, training, sharding, LayerKind::Head, layout.pipeline > 1));
  return layers;
}

std::uint64_t pipeline_transfer_bytes(const ModelConfig& model, const TrainingConfig& training,
                                      const ParallelLayout& layout) {
  const std::uint64_t bytes = static_cast<std::uint64_t>(training.micro_batch) *
                              static_cast<std::uint64_t>(training.seq_len) * static_cast<std::uint64_t>(model.hidden) *
                              bytes_per_element(training.dtype);
  return layout.sharding().sequence_split(bytes);
}

namespace {

class StageTraceBuilder {
 public:
  explicit StageTraceBuilder(Trace& trace)
      : t_(trace),
        e_(bytes_per_element(trace.training.dtype)),
        n_(static_cast<int>(trace.layers.size())),
        first_stage_(trace.stage == 0),
        last_stage_(trace.stage == trace.layout.pipeline - 1),
        transfer_bytes_(pipeline_transfer_bytes(trace.model, trace.training, trace.layout)) {
    for (OpKind pass : {OpKind::Forward, OpKind::Recompute, OpKind::Backward})
      for (LayerKind kind : {LayerKind::Embedding, LayerKind::Transformer, LayerKind::Head})
        collectives_[static_cast<int>(kind)][pass_index(pass)] =
            tensor_collectives(trace.model, trace.training, trace.layout.sharding(), kind, pass);
  }

  // The ops of one micro-batch's forward and backward, to check the trace's size before building it.
  long double ops_per_micro_batch() const {
    long double ops = (first_stage_ ? 0 : 2) + (last_stage_ ? 0 : 2);
    for (const auto& l : t_.layers) {
      ops += 2 + static_cast<long double>(of(l, OpKind::Forward).size() + of(l, OpKind::Backward).size());
      if (recomputed(l)) ops += 1 + static_cast<long double>(of(l, OpKind::Recompute).size());
    }
    return ops;
  }

  void forward(int mb) {
    if (!first_stage_) communicate(OpKind::RecvActivation, 0, mb, transfer_bytes_);
    for (int i = 0; i < n_; ++i) {
      const LayerInfo& l = t_.layers[static_cast<std::size_t>(i)];
      t_.ops.push_back({OpKind::Forward, i, mb, l.forward_flops, l.params_used * e_, 0, kept_in_forward(l), 0});
      collect(l, OpKind::Forward, i, mb);
    }
    if (!last_stage_) communicate(OpKind::SendActivation, n_ - 1, mb, transfer_bytes_);
  }

  void backward(int mb) {
    if (!last_stage_) communicate(OpKind::RecvGradient, n_ - 1, mb, transfer_bytes_);
    for (int i = n_ - 1; i >= 0; --i) {
      const LayerInfo& l = t_.layers[static_cast<std::size_t>(i)];
      std::uint64_t held = kept_in_forward(l);
      if (recomputed(l)) {
        t_.ops.push_back({OpKind::Recompute, i, mb, l.forward_flops, l.params_used * e_, 0, l.activation_bytes, 0});
        collect(l, OpKind::Recompute, i, mb);
        held += l.activation_bytes;
      }
      t_.ops.push_back({OpKind::Backward, i, mb, l.backward_flops, l.params_used * e_, l.params * e_, 0, held});
      collect(l, OpKind::Backward, i, mb);
    }
    if (!first_stage_) communicate(OpKind::SendGradient, 0, mb, transfer_bytes_);
  }

 private:
  static int pass_index(OpKind pass) { return pass == OpKind::Forward ? 0 : pass == OpKind::Recompute ? 1 : 2; }
  const std::vector<TensorCollective>& of(const LayerInfo& l, OpKind pass) const {
    return collectives_[static_cast<int>(l.kind)][pass_index(pass)];
  }
  bool recomputed(const LayerInfo& l) const { return t_.training.recompute && l.kind == LayerKind::Transformer; }
  std::uint64_t kept_in_forward(const LayerInfo& l) const {
    return recomputed(l) ? l.checkpoint_bytes : l.activation_bytes;
  }
  void communicate(OpKind kind, int layer, int mb, std::uint64_t bytes) {
    TraceOp op;
    op.kind = kind;
    op.layer = layer;
    op.micro_step = mb;
    op.comm_bytes = bytes;
    t_.ops.push_back(op);
  }
  void collect(const LayerInfo& l, OpKind pass, int layer, int mb) {
    for (const auto& c : of(l, pass)) communicate(c.kind, layer, mb, c.bytes);
  }

  Trace& t_;
  std::uint64_t e_;
  int n_;
  bool first_stage_, last_stage_;
  std::uint64_t transfer_bytes_;
  std::vector<TensorCollective> collectives_[3][3];
};

}  // namespace

Trace generate_stage_trace(const ModelConfig& model, const TrainingConfig& training, const ParallelLayout& layout,
                           int stage) {
  validate_training(model, training);
  validate_layout(model, training, layout);
  if (stage < 0 || stage >= layout.pipeline)
    throw std::invalid_argument("stage " + std::to_string(stage) + " is not one of the pipeline's stages 0.." +
                                std::to_string(layout.pipeline - 1));
  Trace trace;
  trace.model = model;
  trace.training = training;
  trace.layout = layout;
  trace.stage = stage;
  trace.layers = stage_layer_infos(model, training, layout, stage);
  StageTraceBuilder builder(trace);
  const long double ops = builder.ops_per_micro_batch() * training.grad_accum;
  if (ops > static_cast<long double>(kMaxTraceOps))
    throw std::invalid_argument("grad-accum " + std::to_string(training.grad_accum) + ": the stage trace would list more than " +
                                std::to_string(kMaxTraceOps) + " ops");
  trace.ops.reserve(static_cast<std::size_t>(ops));
  for (const PipelineStep& step : pipeline_steps(layout.pipeline_schedule, layout.pipeline, stage, training.grad_accum)) {
    if (step.forward)
      builder.forward(step.micro_batch);
    else
      builder.backward(step.micro_batch);
  }
  assign_kernels(trace);
  return trace;
}

}  // namespace luwu::workloads
