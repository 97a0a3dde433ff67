// The trace file format: reading strictly (every field checked, errors name the JSON path) and
// writing whole or not at all.
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
  return Json{{"kind", to_string(op.kind)},
              {"layer", op.layer},
              {"micro_step", op.micro_step},
              {"flops", op.flops},
              {"param_bytes", op.param_bytes},
              {"grad_bytes", op.grad_bytes},
              {"act_saved_bytes", op.act_saved_bytes},
              {"act_freed_bytes", op.act_freed_bytes},
              {"gemm", Json{{"m", op.gemm.m}, {"n", op.gemm.n}, {"k", op.gemm.k}}}};
}

GemmShape gemm_from_json(const JsonNode& node) {
  node.only_keys({"m", "n", "k"});
  return {node.at("m").as_int(1, kMaxCount), node.at("n").as_int(1, kMaxCount), node.at("k").as_int(1, kMaxCount)};
}

TraceOp op_from_json(const JsonNode& node, const Trace& trace) {
  node.only_keys({"kind", "layer", "micro_step", "flops", "param_bytes", "grad_bytes", "act_saved_bytes",
                  "act_freed_bytes", "gemm"});
  TraceOp op;
  op.kind = node.at("kind").as_choice(choices_by_name({OpKind::Forward, OpKind::Recompute, OpKind::Backward}), "op kind");
  op.layer = static_cast<int>(node.at("layer").as_int(0, static_cast<std::int64_t>(trace.layers.size()) - 1));
  op.micro_step = static_cast<int>(node.at("micro_step").as_int(0, trace.training.grad_accum - 1));
  op.flops = node.at("flops").as_non_negative();
  op.param_bytes = as_count(node.at("param_bytes"));
  op.grad_bytes = as_count(node.at("grad_bytes"));
  if (op.kind != OpKind::Backward && op.grad_bytes != 0)
    node.at("grad_bytes").fail("only backward ops produce gradients; expected 0");
  op.act_saved_bytes = as_count(node.at("act_saved_bytes"));
  op.act_freed_bytes = as_count(node.at("act_freed_bytes"));
  // Traces written before ops carried their shape: the shape generate_trace gives the layer.
  op.gemm = node.has("gemm") ? gemm_from_json(node.at("gemm"))
                             : representative_gemm(trace.model, trace.training,
                                                   trace.layers[static_cast<std::size_t>(op.layer)].kind);
  return op;
}

}  // namespace

Json trace_to_json(const Trace& trace) {
  Json layers = Json::array();
  for (const auto& l : trace.layers) layers.push_back(layer_to_json(l));
  Json ops = Json::array();
  for (const auto& op : trace.ops) ops.push_back(op_to_json(op));
  return Json{{"format", kFormat},
              {"version", Trace::kVersion},
              {"model", model_to_json(trace.model)},
              {"training", training_to_json(trace.training)},
              {"layers", std::move(layers)},
              {"ops", std::move(ops)}};
}

Trace trace_from_json(const JsonNode& node) {
  node.only_keys({"format", "version", "model", "training", "layers", "ops"});
  node.at("format").as_choice_index({kFormat}, "format");
  const std::int64_t version = node.at("version").as_int(0, kMaxInt);
  if (version != Trace::kVersion)
    node.at("version").fail("unsupported trace version " + std::to_string(version) + " (this luwusim reads version " +
                            std::to_string(Trace::kVersion) + ")");
  Trace trace;
  trace.model = model_from_json(node.at("model"));
  trace.training = training_from_json(node.at("training"), trace.model);

  const JsonNode layers = node.at("layers");
  const std::size_t expected_layers = static_cast<std::size_t>(trace.model.layers) + 2;
  if (layers.size() != expected_layers)
    layers.fail("expected " + std::to_string(expected_layers) + " layers (embedding, " +
                std::to_string(trace.model.layers) + " blocks, head), found " + std::to_string(layers.size()));
  for (std::size_t i = 0; i < layers.size(); ++i) {
    LayerInfo l = layer_from_json(layers.at(i));
    LayerKind expected = i == 0 ? LayerKind::Embedding : i + 1 == layers.size() ? LayerKind::Head : LayerKind::Transformer;
    if (l.kind != expected) layers.at(i).at("kind").fail("expected \"" + to_string(expected) + "\" at this position");
    trace.layers.push_back(std::move(l));
  }
  std::uint64_t params = 0;  // no wrap: below 2^58 + 2^62 at each check
  for (const auto& l : trace.layers)
    if ((params += l.params) > kMaxParams)
      layers.fail("more than 2^58 parameters in all: too many to count in bytes");

  const JsonNode ops = node.at("ops");
  trace.ops.reserve(ops.size());
  for (std::size_t i = 0; i < ops.size(); ++i) trace.ops.push_back(op_from_json(ops.at(i), trace));
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
