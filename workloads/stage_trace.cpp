#include "workloads/stage_trace.hpp"

#include <stdexcept>

#include "workloads/pipeline_schedule.hpp"
#include "workloads/tensor_collectives.hpp"

namespace luwu::workloads {

std::vector<LayerInfo> stage_layer_infos(const ModelConfig& model, const TrainingConfig& training,
                                         const ParallelLayout& layout, int stage) {
  const std::vector<StageBlocks> chunks = stage_chunk_blocks(model.layers, layout, stage);
  const TensorSharding sharding = layout.sharding();
  std::vector<LayerInfo> layers;
  layers.reserve(static_cast<std::size_t>(chunks.size() * chunks.front().count) + 2);
  if (stage == 0) layers.push_back(sharded_layer_info(model, training, sharding, LayerKind::Embedding));
  for (const StageBlocks& blocks : chunks)
    for (int i = 0; i < blocks.count; ++i) layers.push_back(block_layer_info(model, training, sharding, blocks.first + i));
  // The last stage keeps its own copy of a tied matrix when the embedding is elsewhere.
  if (stage == layout.pipeline - 1)
    layers.push_back(sharded_layer_info(model, training, sharding, LayerKind::Head, layout.pipeline > 1));
  return layers;
}

std::uint64_t pipeline_activation_bytes(const ModelConfig& model, const TrainingConfig& training,
                                        const ParallelLayout& layout) {
  const std::uint64_t bytes = static_cast<std::uint64_t>(training.micro_batch) *
                              static_cast<std::uint64_t>(training.seq_len) * static_cast<std::uint64_t>(model.hidden) *
                              bytes_per_element(training.dtype);
  return layout.sharding().sequence_split(bytes);
}

std::uint64_t pipeline_transfer_bytes(const ModelConfig& model, const TrainingConfig& training,
                                      const ParallelLayout& layout) {
  const std::uint64_t bytes = pipeline_activation_bytes(model, training, layout);
  // Megatron-LM's split_tensor_into_1d_equal_chunks: the activation's elements / tensor each.
  if (!layout.splits_pipeline_sends()) return bytes;
  const std::uint64_t e = bytes_per_element(training.dtype);
  return (bytes / e + static_cast<std::uint64_t>(layout.tensor) - 1) / static_cast<std::uint64_t>(layout.tensor) * e;
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
        transfer_bytes_(pipeline_transfer_bytes(trace.model, trace.training, trace.layout)),
        gathered_bytes_(trace.layout.splits_pipeline_sends()
                            ? pipeline_activation_bytes(trace.model, trace.training, trace.layout)
                            : 0) {
    // Chunk c's layers: [chunk_begin_[c], chunk_begin_[c + 1]); the embedding goes with the first
    // chunk, the head with the last.
    const auto chunks = stage_chunk_blocks(trace.model.layers, trace.layout, trace.stage);
    chunk_begin_.push_back(0);
    for (std::size_t c = 0; c < chunks.size(); ++c)
      chunk_begin_.push_back(chunk_begin_.back() + chunks[c].count + (c == 0 && first_stage_ ? 1 : 0));
    chunk_begin_.back() = n_;
    for (OpKind pass : {OpKind::Forward, OpKind::Recompute, OpKind::Backward}) {
      for (LayerKind kind : {LayerKind::Embedding, LayerKind::Transformer, LayerKind::Head})
        collectives_[static_cast<int>(kind)][pass_index(pass)] =
            tensor_collectives(trace.model, trace.training, trace.layout.sharding(), kind, pass);
      collectives_[kDenseBlock][pass_index(pass)] = tensor_collectives(
          trace.model.with_dense_ffn(), trace.training, trace.layout.sharding(), LayerKind::Transformer, pass);
    }
  }

  // The ops of one micro-batch's forward and backward, to check the trace's size before building it.
  long double ops_per_micro_batch() const {
    long double ops = 0;
    const long double receive = gathered_bytes_ > 0 ? 2 : 1;  // a receive, and its gather
    for (int c = 0; c < chunks(); ++c) ops += (has_previous(c) ? 1 + receive : 0) + (has_next(c) ? 1 + receive : 0);
    for (const auto& l : t_.layers) {
      ops += 2 + static_cast<long double>(of(l, OpKind::Forward).size() + of(l, OpKind::Backward).size());
      if (recomputed(l)) ops += 1 + static_cast<long double>(of(l, OpKind::Recompute).size());
    }
    return ops;
  }

  void forward(int chunk, int mb) {
    const int first = chunk_begin_[static_cast<std::size_t>(chunk)], end = chunk_begin_[static_cast<std::size_t>(chunk) + 1];
    if (has_previous(chunk)) receive(OpKind::RecvActivation, first, mb);
    for (int i = first; i < end; ++i) {
      const LayerInfo& l = t_.layers[static_cast<std::size_t>(i)];
      t_.ops.push_back({OpKind::Forward, i, mb, l.forward_flops, l.params_used * e_, 0, kept_in_forward(l), 0});
      collect(l, OpKind::Forward, i, mb);
    }
    if (has_next(chunk)) communicate(OpKind::SendActivation, end - 1, mb, transfer_bytes_);
  }

  void backward(int chunk, int mb) {
    const int first = chunk_begin_[static_cast<std::size_t>(chunk)], end = chunk_begin_[static_cast<std::size_t>(chunk) + 1];
    if (has_next(chunk)) receive(OpKind::RecvGradient, end - 1, mb);
    for (int i = end - 1; i >= first; --i) {
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
    if (has_previous(chunk)) communicate(OpKind::SendGradient, first, mb, transfer_bytes_);
  }

 private:
  int chunks() const { return static_cast<int>(chunk_begin_.size()) - 1; }
  // Whether chunk c has a virtual stage before it (to receive activations from) and after it.
  bool has_previous(int c) const { return !(first_stage_ && c == 0); }
  bool has_next(int c) const { return !(last_stage_ && c == chunks() - 1); }
  // A receive; a split send is then all-gathered over the tensor group (Megatron-LM's
  // gather_split_1d_tensor).
  void receive(OpKind kind, int layer, int mb) {
    communicate(kind, layer, mb, transfer_bytes_);
    if (gathered_bytes_ > 0) communicate(OpKind::TensorAllGather, layer, mb, gathered_bytes_);
  }
  static int pass_index(OpKind pass) { return pass == OpKind::Forward ? 0 : pass == OpKind::Recompute ? 1 : 2; }
  const std::vector<TensorCollective>& of(const LayerInfo& l, OpKind pass) const {
    return collectives_[l.dense_ffn ? kDenseBlock : static_cast<int>(l.kind)][pass_index(pass)];
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
  std::uint64_t gathered_bytes_;  // the whole activation, when sends are split over the tensor group
  std::vector<int> chunk_begin_;
  static constexpr int kDenseBlock = 3;  // a mixture's dense blocks (LayerInfo::dense_ffn)
  std::vector<TensorCollective> collectives_[4][3];
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
  for (const PipelineStep& step : pipeline_steps(layout.pipeline_schedule, layout.pipeline, stage, training.grad_accum,
                                                 layout.virtual_stages(model.layers))) {
    if (step.forward)
      builder.forward(step.chunk, step.micro_batch);
    else
      builder.backward(step.chunk, step.micro_batch);
  }
  assign_kernels(trace);
  return trace;
}

}  // namespace luwu::workloads
