// The trace file format: reading strictly (every field checked, errors name the JSON path) and
// writing whole or not at all.
#include <algorithm>
#include <cmath>
#include <limits>

#include "common/atomic_write.hpp"
#include "workloads/trace.hpp"
#include "workloads/training_json.hpp"

namespace luwu::workloads {

namespace {

constexpr const char* kFormat = "luwusim-trace";
constexpr std::int64_t kMaxInt = std::numeric_limits<int>::max();

// Byte and parameter counts up to 2^62, so that they add up without wrapping, and below 2^63, which
// as_int's bound INT64_MAX becomes as a double (converting 2^63 back to int64 is undefined).
constexpr std::int64_t kMaxCount = std::int64_t{1} << 62;
// As model_config.cpp: at most 2^58 parameters, so 16 bytes of state each still count in uint64.
constexpr std::uint64_t kMaxParams = std::uint64_t{1} << 58;

// Modules nested around one kernel: a bound that no real module tree reaches.
constexpr std::int64_t kMaxModulesPerKernel = 64;

std::uint64_t as_count(const JsonNode& n) { return static_cast<std::uint64_t>(n.as_int(0, kMaxCount)); }

Json layer_to_json(const LayerInfo& l) {
  return Json{{"name", l.name},
              {"kind", to_string(l.kind)},
              {"params", l.params},
              {"params_used", l.params_used},
              {"forward_flops", l.forward_flops},
              {"backward_flops", l.backward_flops},
              {"activation_bytes", l.activation_bytes},
              {"checkpoint_bytes", l.checkpoint_bytes}};
}

LayerInfo layer_from_json(const JsonNode& node) {
  node.only_keys({"name", "kind", "params", "params_used", "forward_flops", "backward_flops", "activation_bytes",
                  "checkpoint_bytes"});
  LayerInfo l;
  l.name = node.at("name").as_string();
  l.kind = node.at("kind").as_choice(
      choices_by_name({LayerKind::Embedding, LayerKind::Transformer, LayerKind::Head}), "layer kind");
  l.params = as_count(node.at("params"));
  l.params_used = as_count(node.at("params_used"));
  if (l.params_used < l.params) node.at("params_used").fail("params_used must be at least params");
  l.forward_flops = node.at("forward_flops").as_non_negative();
  l.backward_flops = node.at("backward_flops").as_non_negative();
  l.activation_bytes = as_count(node.at("activation_bytes"));
  l.checkpoint_bytes = as_count(node.at("checkpoint_bytes"));
  return l;
}

Json op_to_json(const TraceOp& op) {
  if (!is_compute(op.kind))
    return Json{{"kind", to_string(op.kind)},
                {"layer", op.layer},
                {"micro_step", op.micro_step},
                {"bytes", op.comm_bytes},
                {"kernels", op.kernels}};
  return Json{{"kind", to_string(op.kind)},
              {"layer", op.layer},
              {"micro_step", op.micro_step},
              {"flops", op.flops},
              {"param_bytes", op.param_bytes},
              {"grad_bytes", op.grad_bytes},
              {"act_saved_bytes", op.act_saved_bytes},
              {"act_freed_bytes", op.act_freed_bytes},
              {"kernels", op.kernels}};
}

Json kernel_to_json(const Kernel& k) {
  Json j{{"name", k.name},
         {"kind", to_string(k.kind)},
         {"flops", k.flops},
         {"bytes", k.bytes},
         {"output_elements", k.output_elements}};
  if (k.kind == KernelKind::Gemm) {
    j["gemm"] = Json{{"m", k.gemm.m}, {"n", k.gemm.n}, {"k", k.gemm.k}};
    if (k.gemm.batch != 1) j["gemm"]["batch"] = k.gemm.batch;
  }
  if (k.params > 0) j["params"] = k.params;
  if (k.parameterless_modules > 0) j["parameterless_modules"] = k.parameterless_modules;
  if (k.measured_s > 0) j["measured_s"] = k.measured_s;
  if (k.reduction_bytes > 0) j["reduction_bytes"] = k.reduction_bytes;
  if (k.broadcast_bytes > 0) j["broadcast_bytes"] = k.broadcast_bytes;
  return j;
}

GemmShape gemm_from_json(const JsonNode& node) {
  node.only_keys({"m", "n", "k", "batch"});
  return {node.at("m").as_int(1, kMaxCount), node.at("n").as_int(1, kMaxCount), node.at("k").as_int(1, kMaxCount),
          node.get_int("batch", 1, 1, kMaxCount)};
}

Kernel kernel_from_json(const JsonNode& node) {
  node.only_keys({"name", "kind", "flops", "bytes", "reduction_bytes", "broadcast_bytes", "output_elements", "gemm", "params",
                  "parameterless_modules", "measured_s"});
  Kernel k;
  k.name = node.at("name").as_string();
  k.kind = node.at("kind").as_choice(
      choices_by_name({KernelKind::Gemm, KernelKind::Attention, KernelKind::Elementwise}), "kernel kind");
  k.flops = node.at("flops").as_non_negative();
  k.bytes = node.at("bytes").as_non_negative();
  k.output_elements = node.at("output_elements").as_non_negative();
  if (node.has("reduction_bytes")) {
    k.reduction_bytes = node.at("reduction_bytes").as_non_negative();
    if (k.kind != KernelKind::Elementwise) node.at("reduction_bytes").fail("only elementwise kernels have row-reduction bytes");
    if (k.reduction_bytes > k.bytes) node.at("reduction_bytes").fail("a kernel's row-reduction bytes are part of its bytes");
  }
  if (node.has("broadcast_bytes")) {
    k.broadcast_bytes = node.at("broadcast_bytes").as_non_negative();
    if (k.kind != KernelKind::Elementwise) node.at("broadcast_bytes").fail("only elementwise kernels have broadcast bytes");
    if (k.reduction_bytes + k.broadcast_bytes > k.bytes)
      node.at("broadcast_bytes").fail("a kernel's broadcast and row-reduction bytes are parts of its bytes");
  }
  if (k.kind == KernelKind::Gemm) {
    k.gemm = gemm_from_json(node.at("gemm"));
  } else if (node.has("gemm")) {
    node.at("gemm").fail("only GEMM kernels have a shape");
  }
  if (node.has("params")) k.params = as_count(node.at("params"));
  k.parameterless_modules = static_cast<int>(node.get_int("parameterless_modules", 0, 0, kMaxModulesPerKernel));
  if (node.has("measured_s")) {
    k.measured_s = node.at("measured_s").as_positive();
    if (k.measured_s > kMaxMeasuredKernelSeconds) node.at("measured_s").fail("a kernel of more than an hour is not a measurement");
  }
  return k;
}

// The FLOPs of an op's kernels must be the op's (relative 1e-9: both are sums of the same terms).
void check_kernel_flops(const JsonNode& node, const TraceOp& op, const std::vector<Kernel>& kernels) {
  double sum = 0;
  for (const auto& k : kernels) sum += k.flops;
  if (std::abs(sum - op.flops) > 1e-9 * std::max(sum, op.flops))
    node.fail("the op's kernels add up to " + std::to_string(sum) + " FLOPs, its \"flops\" says " +
              std::to_string(op.flops));
}

// Kernels that name their sub-modules' parameters must name all the op uses (checked in elements
// at the trace's dtype); kernels that name none leave the op one module (sim/systems/param_fetch_plan).
void check_kernel_params(const JsonNode& node, const TraceOp& op, const std::vector<Kernel>& kernels,
                         std::uint64_t element_bytes) {
  std::uint64_t sum = 0;
  for (const auto& k : kernels) sum += k.params;
  if (sum > 0 && sum * element_bytes != op.param_bytes)
    node.fail("the op's kernels name " + std::to_string(sum) + " parameters (" + std::to_string(sum * element_bytes) +
              " bytes), its \"param_bytes\" says " + std::to_string(op.param_bytes));
}

const Choices<OpKind>& compute_op_kinds() {
  static const Choices<OpKind> kinds = choices_by_name({OpKind::Forward, OpKind::Recompute, OpKind::Backward});
  return kinds;
}

const Choices<OpKind>& all_op_kinds() {
  static const Choices<OpKind> kinds = choices_by_name(
      {OpKind::Forward, OpKind::Recompute, OpKind::Backward, OpKind::TensorAllReduce, OpKind::TensorReduceScatter,
       OpKind::TensorAllGather, OpKind::SendActivation, OpKind::RecvActivation, OpKind::SendGradient,
       OpKind::RecvGradient, OpKind::ExpertAllToAll});
  return kinds;
}

// Why a communication op cannot be in this trace's layout and stage, or "".
std::string misplaced_communication(OpKind kind, const Trace& trace) {
  const bool first = trace.stage == 0, last = trace.stage == trace.layout.pipeline - 1;
  if (is_tensor_collective(kind))
    return trace.layout.tensor > 1 ? "" : "a tensor-parallel collective needs a layout with tensor > 1";
  if (kind == OpKind::ExpertAllToAll)
    return trace.layout.expert > 1 ? "" : "an expert all-to-all needs a layout with expert > 1";
  // Interleaved, every stage has a virtual stage on either side (the last wraps to the first).
  if (trace.layout.interleaved()) return "";
  if ((kind == OpKind::SendActivation || kind == OpKind::RecvGradient) && last)
    return "the last pipeline stage has no next stage to exchange with";
  if ((kind == OpKind::RecvActivation || kind == OpKind::SendGradient) && first)
    return "the first pipeline stage has no previous stage to exchange with";
  return "";
}

TraceOp communication_from_json(const JsonNode& node, const Trace& trace, OpKind kind) {
  node.only_keys({"kind", "layer", "micro_step", "bytes", "kernels"});
  if (const std::string why = misplaced_communication(kind, trace); !why.empty()) node.at("kind").fail(why);
  TraceOp op;
  op.kind = kind;
  op.layer = static_cast<int>(node.at("layer").as_int(0, static_cast<std::int64_t>(trace.layers.size()) - 1));
  op.micro_step = static_cast<int>(node.at("micro_step").as_int(0, trace.training.grad_accum - 1));
  op.comm_bytes = static_cast<std::uint64_t>(node.at("bytes").as_int(1, kMaxCount));
  op.kernels = static_cast<int>(node.at("kernels").as_int(0, static_cast<std::int64_t>(trace.kernel_lists.size()) - 1));
  if (!trace.kernels_of(op).empty()) node.at("kernels").fail("a communication op launches no kernels: expected an empty list");
  return op;
}

TraceOp op_from_json(const JsonNode& node, const Trace& trace, std::int64_t version) {
  const OpKind kind = node.at("kind").as_choice(version >= 3 ? all_op_kinds() : compute_op_kinds(), "op kind");
  if (!is_compute(kind)) return communication_from_json(node, trace, kind);
  if (version == 1)
    node.only_keys({"kind", "layer", "micro_step", "flops", "param_bytes", "grad_bytes", "act_saved_bytes",
                    "act_freed_bytes", "gemm"});
  else
    node.only_keys({"kind", "layer", "micro_step", "flops", "param_bytes", "grad_bytes", "act_saved_bytes",
                    "act_freed_bytes", "kernels"});
  TraceOp op;
  op.kind = kind;
  op.layer = static_cast<int>(node.at("layer").as_int(0, static_cast<std::int64_t>(trace.layers.size()) - 1));
  op.micro_step = static_cast<int>(node.at("micro_step").as_int(0, trace.training.grad_accum - 1));
  op.flops = node.at("flops").as_non_negative();
  op.param_bytes = as_count(node.at("param_bytes"));
  op.grad_bytes = as_count(node.at("grad_bytes"));
  if (op.kind != OpKind::Backward && op.grad_bytes != 0)
    node.at("grad_bytes").fail("only backward ops produce gradients; expected 0");
  op.act_saved_bytes = as_count(node.at("act_saved_bytes"));
  op.act_freed_bytes = as_count(node.at("act_freed_bytes"));
  if (version == 1) {
    if (node.has("gemm")) gemm_from_json(node.at("gemm"));  // checked, then replaced by the layer's kernels
    return op;
  }
  op.kernels = static_cast<int>(node.at("kernels").as_int(0, static_cast<std::int64_t>(trace.kernel_lists.size()) - 1));
  check_kernel_flops(node.at("flops"), op, trace.kernels_of(op));
  check_kernel_params(node.at("param_bytes"), op, trace.kernels_of(op), bytes_per_element(trace.training.dtype));
  return op;
}

}  // namespace

Json trace_to_json(const Trace& trace) {
  Json layers = Json::array();
  for (const auto& l : trace.layers) layers.push_back(layer_to_json(l));
  Json kernel_lists = Json::array();
  for (const auto& list : trace.kernel_lists) {
    Json kernels = Json::array();
    for (const auto& k : list) kernels.push_back(kernel_to_json(k));
    kernel_lists.push_back(std::move(kernels));
  }
  Json ops = Json::array();
  for (const auto& op : trace.ops) ops.push_back(op_to_json(op));
  return Json{{"format", kFormat},
              {"version", Trace::kVersion},
              {"model", model_to_json(trace.model)},
              {"training", training_to_json(trace.training)},
              {"layout", layout_to_json(trace.layout)},
              {"stage", trace.stage},
              {"layers", std::move(layers)},
              {"kernel_lists", std::move(kernel_lists)},
              {"ops", std::move(ops)}};
}

Trace trace_from_json(const JsonNode& node) {
  node.at("format").as_choice_index({kFormat}, "format");
  const std::int64_t version = node.at("version").as_int(0, kMaxInt);
  if (version < 1 || version > Trace::kVersion)
    node.at("version").fail("unsupported trace version " + std::to_string(version) + " (this luwusim reads versions 1 to " +
                            std::to_string(Trace::kVersion) + ")");
  if (version == 1)
    node.only_keys({"format", "version", "model", "training", "layers", "ops"});
  else if (version == 2)
    node.only_keys({"format", "version", "model", "training", "layers", "kernel_lists", "ops"});
  else
    node.only_keys({"format", "version", "model", "training", "layout", "stage", "layers", "kernel_lists", "ops"});
  Trace trace;
  trace.model = model_from_json(node.at("model"));
  trace.training = training_from_json(node.at("training"), trace.model);
  if (node.has("layout")) trace.layout = layout_from_json(node.at("layout"), trace.model, trace.training);
  if (node.has("stage")) trace.stage = static_cast<int>(node.at("stage").as_int(0, trace.layout.pipeline - 1));

  // The stage's layers: the embedding first on the first stage, the head last on the last.
  const JsonNode layers = node.at("layers");
  const int stages = trace.layout.pipeline;
  const bool first = trace.stage == 0, last = trace.stage == stages - 1;
  int blocks = 0;
  for (const StageBlocks& chunk : stage_chunk_blocks(trace.model.layers, trace.layout, trace.stage)) blocks += chunk.count;
  const std::size_t expected_layers = static_cast<std::size_t>(blocks) + (first ? 1 : 0) + (last ? 1 : 0);
  if (layers.size() != expected_layers)
    layers.fail("expected " + std::to_string(expected_layers) + " layers (" + (first ? "embedding, " : "") +
                std::to_string(blocks) + " blocks" + (last ? ", head" : "") +
                (stages > 1 ? " of stage " + std::to_string(trace.stage) + " of " + std::to_string(stages) : "") +
                "), found " + std::to_string(layers.size()));
  std::vector<int> block_index;  // each block's place in the model, in the stage's order
  for (const StageBlocks& chunk : stage_chunk_blocks(trace.model.layers, trace.layout, trace.stage))
    for (int b = 0; b < chunk.count; ++b) block_index.push_back(chunk.first + b);
  for (std::size_t i = 0; i < layers.size(); ++i) {
    LayerInfo l = layer_from_json(layers.at(i));
    LayerKind expected = first && i == 0                  ? LayerKind::Embedding
                         : last && i + 1 == layers.size() ? LayerKind::Head
                                                          : LayerKind::Transformer;
    if (l.kind != expected) layers.at(i).at("kind").fail("expected \"" + to_string(expected) + "\" at this position");
    if (l.kind == LayerKind::Transformer)
      derive_block_fields(l, trace.model, trace.layout.sharding(), block_index.at(i - (first ? 1 : 0)));
    trace.layers.push_back(std::move(l));
  }
  std::uint64_t params = 0;  // no wrap: below 2^58 + 2^62 at each check
  for (const auto& l : trace.layers)
    if ((params += l.params) > kMaxParams)
      layers.fail("more than 2^58 parameters in all: too many to count in bytes");

  if (version > 1) {
    const JsonNode lists = node.at("kernel_lists");
    for (std::size_t i = 0; i < lists.size(); ++i) {
      std::vector<Kernel> kernels;
      for (std::size_t k = 0; k < lists.at(i).size(); ++k) kernels.push_back(kernel_from_json(lists.at(i).at(k)));
      trace.kernel_lists.push_back(std::move(kernels));
    }
  }
  const JsonNode ops = node.at("ops");
  trace.ops.reserve(ops.size());
  for (std::size_t i = 0; i < ops.size(); ++i) trace.ops.push_back(op_from_json(ops.at(i), trace, version));
  if (version == 1) {
    assign_kernels(trace);
    for (std::size_t i = 0; i < ops.size(); ++i) check_kernel_flops(ops.at(i).at("flops"), trace.ops[i], trace.kernels_of(trace.ops[i]));
  }
  return trace;
}

Trace load_trace(const std::string& file) {
  Json doc = load_json_file(file);
  return trace_from_json(JsonNode(doc, file));
}

void save_trace(const Trace& trace, const std::string& file) {
  write_file_atomically(file, trace_to_json(trace).dump(1) + "\n");
}

}  // namespace luwu::workloads
