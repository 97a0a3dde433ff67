#pragma once
// One training iteration of one data-parallel worker as a sequence of per-layer operations, the
// input of the simulator.  Versioned JSON (kVersion) so stored traces stay readable.
//
// Op order: for each micro_step in [0, grad_accum): Forward of layers 0..L+1, then for layers
// L+1..0: Recompute (transformer blocks, only with recompute) and Backward.
// Bytes per op (dtype = training.dtype):
// - param_bytes: the parameters the op's compute reads (LayerInfo::params_used) at dtype.  With
//   tied embeddings the head's ops carry the shared matrix too: they need it.
// - grad_bytes: Backward ops only, the gradient the layer hands to reduction, LayerInfo::params at
//   dtype.  A tied matrix's gradient is accumulated from the head's contribution and handed over
//   whole with the embedding's Backward, as autograd does for one shared parameter, so each
//   micro-step's Backward ops sum to exactly total_params() * bytes.
// - act_saved_bytes / act_freed_bytes: activation memory the op allocates / releases.  Forward
//   saves activation_bytes (checkpoint_bytes with recompute); Recompute saves activation_bytes;
//   Backward frees all the layer still holds.  Each micro-step's saves and frees balance.
// Kernels per op: the GPU kernels it launches, in order (workloads/kernels.hpp).  Ops of identical
// layers share one list: Trace::kernel_lists holds each distinct list once, TraceOp::kernels
// indexes it, and the kernels' FLOPs sum to the op's.
// One GPU of a tensor x pipeline layout (workloads/stage_trace.hpp): `layout` and `stage` say which;
// `layers` are the stage's, each this GPU's share; communication ops (tensor-parallel collectives,
// pipeline sends and receives, kernels.hpp's OpKind) carry comm_bytes and nothing else, and point
// at an empty kernel list.  generate_trace's trace is layout 1 x 1 x 1, stage 0, with no
// communication ops.
#include <cstdint>
#include <string>
#include <vector>

#include "common/json_input.hpp"
#include "workloads/kernels.hpp"
#include "workloads/layer_accounting.hpp"
#include "workloads/model_config.hpp"
#include "workloads/parallel_layout.hpp"
#include "workloads/training_config.hpp"

namespace luwu::workloads {

// The most ops one trace may list: 10 million (about 1 GB in memory), e.g. grad_accum 100,000 of a
// 30-block model.  More is refused before anything is allocated.
inline constexpr long long kMaxTraceOps = 10'000'000;


struct TraceOp {
  OpKind kind = OpKind::Forward;
  int layer = 0;       // index into Trace::layers
  int micro_step = 0;  // in [0, grad_accum)
  double flops = 0;
  std::uint64_t param_bytes = 0;
  std::uint64_t grad_bytes = 0;
  std::uint64_t act_saved_bytes = 0;
  std::uint64_t act_freed_bytes = 0;
  int kernels = 0;     // index into Trace::kernel_lists
  std::uint64_t comm_bytes = 0;  // communication ops only: the bytes of the collective's buffer or the transfer

  bool operator==(const TraceOp&) const = default;
};

struct Trace {
  static constexpr int kVersion = 3;
  ModelConfig model;
  TrainingConfig training;
  ParallelLayout layout;  // the job's; this trace is one GPU of pipeline stage `stage`
  int stage = 0;
  std::vector<LayerInfo> layers;
  std::vector<std::vector<Kernel>> kernel_lists;
  std::vector<TraceOp> ops;

  const std::vector<Kernel>& kernels_of(const TraceOp& op) const { return kernel_lists.at(static_cast<std::size_t>(op.kernels)); }

  std::uint64_t total_params() const;      // sum of LayerInfo::params (tied weights once)
  double flops_per_iteration() const;      // sum over ops
  double flops_of(OpKind kind) const;      // sum over ops of one kind
  // The model's FLOPs in an iteration, for MFU: forward and backward, without recompute and
  // without the rows an expert capacity factor pads (they run, but no token needs them).
  double model_flops() const;
  double tokens_per_iteration() const;     // micro_batch * seq_len * grad_accum, this worker
  std::uint64_t param_bytes() const;       // total_params() at dtype
  std::uint64_t peak_activation_bytes() const;  // highest running sum of saved - freed over the ops
  std::uint64_t kernel_count() const;      // kernels the ops launch, in all
  std::uint64_t comm_bytes_of(OpKind kind) const;  // sum of comm_bytes over ops of one kind
};

// Throws std::invalid_argument when the training config does not fit the model or luwusim's
// counts: micro_batch, seq_len, grad_accum outside [1, kMax...] (training_config.hpp);
// seq_len > max_seq; activations of 2^62 bytes or more; more than kMaxTraceOps trace ops.
void validate_training(const ModelConfig& model, const TrainingConfig& training);

Trace generate_trace(const ModelConfig& model, const TrainingConfig& training);
// Sets kernel_lists and every op's kernels from the trace's model, training settings and layout
// (communication ops: an empty list, added only if the trace has such ops).
void assign_kernels(Trace& trace);

// {"format": "luwusim-trace", "version": 3, "model": {...}, "training": {...},
//  "layout": {...} (workloads/parallel_layout.hpp), "stage": 0, "layers": [...],
//  "kernel_lists": [[{"name", "kind", "flops", "bytes", "output_elements", "gemm": {"m", "n", "k"},
//                     "params", "measured_s"}, ...], ...],
//  "ops": [{..., "kernels": index into kernel_lists}]}  ("gemm" for GEMM kernels only; "params" and
//  "measured_s", seconds, only where not 0).  A communication op is {"kind", "layer",
//  "micro_step", "bytes", "kernels"}, its kernel list empty.
luwu::Json trace_to_json(const Trace& trace);
// Strict: format and version checked, unknown keys rejected, every field validated; InputError
// with the JSON path; an op's kernels must sum to its FLOPs.  Version 3 adds "layout" and "stage"
// (both optional: 1 x 1 x 1 and stage 0), the stage's layers (the embedding first on stage 0 only,
// the head last on the last stage only, stage_blocks' count of blocks) and communication ops,
// which must fit the layout (tensor collectives need tensor > 1, sends and receives a neighbour
// stage in their direction).  Version 2 files are version 3 files of layout 1 x 1 x 1 without
// communication ops.  Version 1 files (ops with one
// representative "gemm" and no kernels) load with the kernels layer_kernels derives from the model
// and training settings; their "gemm" is read for validity and otherwise unused.  "training" is read by training_from_json
// (workloads/training_json.hpp), as a scenario's is.
Trace trace_from_json(const luwu::JsonNode& node);
Trace load_trace(const std::string& file);
void save_trace(const Trace& trace, const std::string& file);  // whole or not at all

}  // namespace luwu::workloads
