// `luwusim trace gen|show|models`: write one iteration's per-layer trace for a model, summarize a
// trace file (with --gpu, one block's kernels timed on that GPU), list the model catalog.
#include <algorithm>
#include <iostream>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "cli/command_registry.hpp"
#include "common/input_error.hpp"
#include "common/units.hpp"
#include "models/gpu.hpp"
#include "models/profile.hpp"
#include "sim/engine/op_timing.hpp"
#include "workloads/chakra_et.hpp"
#include "workloads/model_catalog.hpp"
#include "workloads/stage_trace.hpp"
#include "workloads/trace.hpp"
#include "workloads/trace_summary.hpp"

namespace {

using namespace luwu::workloads;
namespace units = luwu::units;

struct GenOptions {
  std::string model;
  int micro_batch = 1;
  int seq_len = 0;  // 0: the model's max_seq, at most 2048
  int grad_accum = 1;
  bool recompute = false;
  bool memory_efficient_attention = false;
  std::string attention_scores = "passes";
  int attention_layout_copies = 0;
  std::string dtype = "fp16";
  std::string output;
  // The parallel layout (workloads/parallel_layout.hpp) and the pipeline stage to write.
  int tensor_parallel = 1;
  int pipeline_parallel = 1;
  int data_parallel = 1;
  int expert_parallel = 1;
  bool sequence_parallel = false;
  std::string pipeline_schedule = "1f1b";
  int layers_per_virtual_stage = 0;
  bool no_scatter_gather = false;
  int stage = 0;
};

ParallelLayout layout_of(const GenOptions& o) {
  ParallelLayout layout;
  layout.tensor = o.tensor_parallel;
  layout.pipeline = o.pipeline_parallel;
  layout.data = o.data_parallel;
  layout.expert = o.expert_parallel;
  layout.sequence_parallel = o.sequence_parallel;
  layout.pipeline_schedule = luwu::choose(o.pipeline_schedule, pipeline_schedule_choices(), "pipeline schedule");
  layout.layers_per_virtual_stage = o.layers_per_virtual_stage;
  layout.scatter_gather_tensors_in_pipeline = !o.no_scatter_gather;
  return layout;
}

TrainingConfig training_of(const GenOptions& o, const ModelConfig& model) {
  TrainingConfig training;
  training.micro_batch = o.micro_batch;
  training.seq_len = o.seq_len > 0 ? o.seq_len : std::min(2048, model.max_seq);
  if (o.seq_len < 0) throw std::invalid_argument("--seq must be positive, got " + std::to_string(o.seq_len));
  training.grad_accum = o.grad_accum;
  training.recompute = o.recompute;
  training.memory_efficient_attention = o.memory_efficient_attention;
  training.attention_scores = luwu::choose(o.attention_scores, attention_scores_choices(), "attention score kernels");
  training.attention_layout_copies = o.attention_layout_copies;
  training.dtype = parse_dtype(o.dtype);
  return training;
}

int run_gen(const GenOptions& o) {
  ModelConfig model = resolve_model(o.model);
  // Layout 1 x 1 x 1 (the default) is generate_trace's trace exactly.
  Trace trace = generate_stage_trace(model, training_of(o, model), layout_of(o), o.stage);
  save_trace(trace, o.output);
  std::cerr << fmt::format("wrote {}: {} ops, {} params, {} per iteration{}\n", o.output, trace.ops.size(),
                           units::count(static_cast<double>(trace.total_params())),
                           units::flops(trace.flops_per_iteration()),
                           trace.layout.whole_model_per_gpu() ? "" : fmt::format(" (one GPU of stage {})", trace.stage));
  return 0;
}

void print_layer_row(const Trace& t, std::size_t i) {
  const LayerInfo& l = t.layers[i];
  std::cout << fmt::format("  {:>4}  {:<12} {:<12} {:>10} {:>14} {:>14} {:>13} {:>13}\n", i, l.name, to_string(l.kind),
                           units::count(static_cast<double>(l.params)), units::flops(l.forward_flops),
                           units::flops(l.backward_flops), units::bytes(static_cast<double>(l.activation_bytes)),
                           units::bytes(static_cast<double>(l.checkpoint_bytes)));
}

// The first transformer block's forward and backward of the first micro-step, each kernel timed
// undisturbed on `gpu` (sim/engine/op_timing.hpp): what the simulator charges one block.
struct BlockTiming {
  const TraceOp* forward = nullptr;
  const TraceOp* backward = nullptr;
};

BlockTiming first_block(const Trace& t) {
  BlockTiming b;
  for (const auto& op : t.ops) {
    if (static_cast<std::size_t>(op.layer) >= t.layers.size() || t.layers[op.layer].kind != LayerKind::Transformer) continue;
    if (!b.forward && op.kind == OpKind::Forward) b.forward = &op;
    if (b.forward && !b.backward && op.kind == OpKind::Backward && op.layer == b.forward->layer) b.backward = &op;
  }
  return b;
}

luwu::Json block_timing_json(const Trace& t, const luwu::models::GpuSpec& gpu) {
  const BlockTiming b = first_block(t);
  luwu::Json out{{"gpu", gpu.name}};
  for (const auto* op : {b.forward, b.backward}) {
    if (!op) continue;
    luwu::Json kernels = luwu::Json::array();
    double total = 0;
    for (const auto& run : luwu::sim::kernel_runs(t, *op, gpu)) {
      const Kernel& k = *run.kernel;
      kernels.push_back({{"name", k.name}, {"kind", to_string(k.kind)}, {"flops", k.flops}, {"bytes", k.bytes},
                         {"seconds", run.seconds}});
      total += run.seconds;
    }
    out[to_string(op->kind)] = luwu::Json{{"layer", op->layer}, {"seconds", total}, {"kernels", kernels}};
  }
  return out;
}

void print_block_timing(const Trace& t, const luwu::models::GpuSpec& gpu) {
  const luwu::Json j = block_timing_json(t, gpu);
  for (const char* pass : {"forward", "backward"}) {
    if (!j.contains(pass)) continue;
    const auto& p = j[pass];
    std::cout << fmt::format("\nblock {} {} on {} (each kernel undisturbed): {}\n", p["layer"].get<std::size_t>(), pass,
                             gpu.name, units::seconds(p["seconds"].get<double>()));
    for (const auto& k : p["kernels"]) {
      const double s = k["seconds"].get<double>(), flops = k["flops"].get<double>();
      std::cout << fmt::format("  {:<26} {:<12} {:>12} {:>12} {:>12}{}\n", k["name"].get<std::string>(),
                               k["kind"].get<std::string>(), units::flops(flops), units::bytes(k["bytes"].get<double>()),
                               units::seconds(s), flops > 0 && s > 0 ? fmt::format("  {:.0f} TFLOP/s", flops / s / 1e12) : "");
    }
  }
}

int run_show(const std::string& file, bool json, const std::string& gpu_profile) {
  Trace t = load_trace(file);
  std::optional<luwu::models::GpuSpec> gpu;
  if (!gpu_profile.empty()) {
    gpu = luwu::models::gpu_from_profile(luwu::models::find_profile(gpu_profile));
    try {  // refused before anything is printed
      gpu->peak_flops(luwu::sim::precision_of(t.training.dtype));
    } catch (const std::invalid_argument& e) {
      throw luwu::InputError(file, "$.training.dtype", std::string(e.what()) + ", the trace's precision (--gpu " + gpu_profile + ")");
    }
  }
  if (json) {
    luwu::Json summary = trace_summary_json(t);
    summary["file"] = file;
    if (gpu) summary["block_on_gpu"] = block_timing_json(t, *gpu);
    std::cout << summary.dump(2) << "\n";
    return 0;
  }
  const double e = bytes_per_element(t.training.dtype);
  std::uint64_t grad_bytes = 0;
  for (const auto& op : t.ops) grad_bytes += op.grad_bytes;
  std::cout << fmt::format("trace {}\n", file);
  std::cout << fmt::format("model            {}: {} blocks, hidden {}, {} heads ({} kv), FFN {}, vocab {}\n",
                           t.model.name, t.model.layers, t.model.hidden, t.model.heads, t.model.kv_heads,
                           describe_ffn(t.model), t.model.vocab);
  std::cout << fmt::format("training         micro-batch {} x seq {} tokens x grad-accum {}, recompute {}, {}{}\n",
                           t.training.micro_batch, t.training.seq_len, t.training.grad_accum,
                           t.training.recompute ? "on" : "off", to_string(t.training.dtype),
                           t.training.memory_efficient_attention ? ", memory-efficient attention" : "");
  if (!t.layout.whole_model_per_gpu()) {
    std::string blocks;
    for (const StageBlocks& chunk : stage_chunk_blocks(t.model.layers, t.layout, t.stage))
      blocks += fmt::format("{}{}..{}", blocks.empty() ? "" : ", ", chunk.first, chunk.first + chunk.count - 1);
    std::cout << fmt::format("layout           tensor {} x pipeline {} x data {}{}{}, {}{}; stage {} of {}: blocks {}\n",
                             t.layout.tensor, t.layout.pipeline, t.layout.data,
                             t.layout.expert > 1 ? fmt::format(" (experts over {})", t.layout.expert) : "",
                             t.layout.sequence_parallel ? " (sequence parallel)" : "", to_string(t.layout.pipeline_schedule),
                             t.layout.interleaved()
                                 ? fmt::format(" interleaved, {} chunks of {} blocks", t.layout.virtual_stages(t.model.layers),
                                               t.layout.layers_per_virtual_stage)
                                 : "",
                             t.stage, t.layout.pipeline, blocks);
    const double collectives = static_cast<double>(t.comm_bytes_of(OpKind::TensorAllReduce) +
                                                   t.comm_bytes_of(OpKind::TensorReduceScatter) +
                                                   t.comm_bytes_of(OpKind::TensorAllGather));
    const double sent = static_cast<double>(t.comm_bytes_of(OpKind::SendActivation) + t.comm_bytes_of(OpKind::SendGradient));
    const double all_to_all = static_cast<double>(t.comm_bytes_of(OpKind::ExpertAllToAll));
    std::cout << fmt::format("communication    {} in tensor-parallel collectives, {} sent to neighbour stages{}\n",
                             units::bytes(collectives), units::bytes(sent),
                             all_to_all > 0 ? ", " + units::bytes(all_to_all) + " in expert all-to-alls" : "");
  }
  std::cout << fmt::format("params           {} ({} at {} B/param)\n", units::count(static_cast<double>(t.total_params())),
                           units::bytes(static_cast<double>(t.param_bytes())), e);
  std::cout << fmt::format("tokens/iteration {} tokens\n", units::count(t.tokens_per_iteration()));
  std::cout << fmt::format("FLOPs/iteration  {} (forward {}, recompute {}, backward {})\n",
                           units::flops(t.flops_per_iteration()), units::flops(t.flops_of(OpKind::Forward)),
                           units::flops(t.flops_of(OpKind::Recompute)), units::flops(t.flops_of(OpKind::Backward)));
  std::cout << fmt::format("grads/iteration  {} handed to reduction over {} micro-steps\n",
                           units::bytes(static_cast<double>(grad_bytes)), t.training.grad_accum);
  std::cout << fmt::format("peak activations {} per worker\n", units::bytes(static_cast<double>(t.peak_activation_bytes())));
  std::cout << fmt::format("ops              {}\n", t.ops.size());
  std::uint64_t measured = 0;
  for (const auto& op : t.ops)
    for (const auto& k : t.kernels_of(op)) measured += k.measured_s > 0;
  if (measured > 0)
    std::cout << fmt::format("measured kernels {} of {} kernel launches take a measured time\n", measured, t.kernel_count());
  std::cout << fmt::format("  {:>4}  {:<12} {:<12} {:>10} {:>14} {:>14} {:>13} {:>13}\n", "#", "layer", "kind", "params",
                           "forward", "backward", "activations", "checkpoint");
  const std::size_t n = t.layers.size();
  const std::size_t head_rows = 3, tail_rows = 2;
  for (std::size_t i = 0; i < n; ++i) {
    if (n > head_rows + tail_rows + 1 && i == head_rows) {
      std::cout << fmt::format("  {:>4}  ... {} more blocks like the above\n", "", n - head_rows - tail_rows);
      i = n - tail_rows;
    }
    print_layer_row(t, i);
  }
  if (gpu) print_block_timing(t, *gpu);
  return 0;
}

int run_export_chakra(const std::string& file, const std::string& output) {
  const Trace trace = load_trace(file);
  const ChakraGraph graph = trace_to_chakra(trace);
  save_chakra(graph, output);
  std::size_t collectives = 0;
  for (const auto& n : graph.nodes) collectives += n.type == ChakraNodeType::CommColl;
  std::cerr << fmt::format("wrote {}: {} Chakra nodes ({} kernels, {} gradient all-reduce hints)\n", output,
                           graph.nodes.size(), graph.nodes.size() - collectives, collectives);
  return 0;
}

// A foreign graph needs the model and training settings it is of (--model and the gen flags).
int run_import_chakra(const std::string& file, const GenOptions& o, bool json_report) {
  const ChakraGraph graph = load_chakra(file);
  std::optional<std::pair<ModelConfig, TrainingConfig>> workload;
  if (!o.model.empty()) {
    ModelConfig model = resolve_model(o.model);
    workload.emplace(model, training_of(o, model));
  }
  const ChakraImport imported = chakra_to_trace(graph, workload);
  if (imported.report.written_by_luwusim && workload)
    std::cerr << "note: " << file << " was written by luwusim and carries its model and training settings; --model and "
              << "the training flags are not used\n";
  save_trace(imported.trace, o.output);
  const auto& r = imported.report;
  if (json_report) std::cout << chakra_import_report_to_json(r).dump(2) << "\n";
  std::cerr << fmt::format("wrote {}: {} ops from {} GPU compute nodes; dropped {} collectives ({}; the trace's "
                           "gradients are {}; the training system issues its own), {} CPU nodes, {} other nodes\n",
                           o.output, imported.trace.ops.size(), r.compute_nodes, r.collectives_dropped,
                           units::bytes(static_cast<double>(r.collective_bytes_dropped)),
                           units::bytes(static_cast<double>(r.trace_grad_bytes)), r.cpu_nodes, r.other_nodes_dropped);
  if (r.ctrl_deps_unresolved + r.ctrl_deps_cyclic > 0)
    std::cerr << fmt::format("ordered by data dependencies; control dependencies dropped: {} on nodes not in the file, "
                             "{} that closed a cycle with the data dependencies\n",
                             r.ctrl_deps_unresolved, r.ctrl_deps_cyclic);
  if (r.kernel_times) std::cerr << kernel_times_summary(*r.kernel_times) << "\n";
  return 0;
}

int run_models() {
  // ffn: width and kind; a mixture of experts: the expert's, x<experts>/<per token>[+<shared>s][, <dense blocks>d].
  std::cout << fmt::format("{:<16} {:>7} {:>7} {:>6} {:>5} {:>7} {:>7} {:>7} {:>10}  {}\n", "model", "layers", "hidden",
                           "heads", "kv", "ffn", "vocab", "max_seq", "params", "source");
  for (const auto& name : catalog_model_names()) {
    const ModelConfig& m = *find_catalog_model(name);
    TrainingConfig tiny;
    tiny.seq_len = 1;
    Trace t = generate_trace(m, tiny);
    std::cout << fmt::format("{:<16} {:>7} {:>7} {:>6} {:>5} {:>7} {:>7} {:>7} {:>10}  {}\n", name, m.layers, m.hidden,
                             m.heads, m.kv_heads,
                             m.moe() ? fmt::format("{} {} x{}/{}{}{}", m.expert_width(), to_string(m.ffn_kind), m.experts,
                                                   m.experts_per_token,
                                                   m.shared_experts > 0 ? fmt::format("+{}s", m.shared_experts) : "",
                                                   m.dense_layers > 0 ? fmt::format(", {}d", m.dense_layers) : "")
                                     : fmt::format("{} {}", m.ffn_hidden, to_string(m.ffn_kind)),
                             m.vocab,
                             m.max_seq, units::count(static_cast<double>(t.total_params())),
                             m.source.substr(0, m.source.find(';')));
  }
  return 0;
}

const bool registered = luwu::cli::register_command(
    "trace", "Per-layer iteration traces of transformer models: gen, show, models, export-chakra, import-chakra", [](CLI::App& app) {
      app.require_subcommand(1);
      auto gen = std::make_shared<GenOptions>();
      CLI::App* gen_cmd = app.add_subcommand(
          "gen", "Write one iteration of one worker as a JSON trace (one GPU of a pipeline stage with the parallel flags)");
      gen_cmd->add_option("--model", gen->model, "Catalog name (see `trace models`) or a model JSON file")->required();
      gen_cmd->add_option("--micro-batch", gen->micro_batch, "Sequences per micro-batch")->capture_default_str();
      gen_cmd->add_option("--seq", gen->seq_len, "Tokens per sequence (default: the model's context, at most 2048)");
      gen_cmd->add_option("--grad-accum", gen->grad_accum, "Micro-batches per iteration")->capture_default_str();
      gen_cmd->add_flag("--recompute", gen->recompute, "Full activation checkpointing (recompute each block)");
      gen_cmd->add_flag("--memory-efficient-attention", gen->memory_efficient_attention,
                        "Attention without materialized scores (FlashAttention): no 5as^2b activation bytes");
      gen_cmd
          ->add_option("--attention-scores", gen->attention_scores,
                       "Unfused attention's kernels over the scores: passes (2 streaming passes, Megatron's fused "
                       "softmax), hugging-face-opt (OPTAttention in eager PyTorch) or masked-fill")
          ->capture_default_str();
      gen_cmd
          ->add_option("--attention-layout-copies", gen->attention_layout_copies,
                       "T x h copies beside unfused attention (Hugging Face's OPT: 5)")
          ->capture_default_str();
      gen_cmd->add_option("--dtype", gen->dtype, "fp16, bf16 or fp32")->capture_default_str();
      gen_cmd->add_option("-o,--output", gen->output, "Trace file to write")->required();
      gen_cmd->add_option("--tensor-parallel", gen->tensor_parallel, "GPUs splitting every layer (Megatron)")
          ->capture_default_str();
      gen_cmd->add_option("--pipeline-parallel", gen->pipeline_parallel, "Pipeline stages the blocks are split over")
          ->capture_default_str();
      gen_cmd->add_option("--data-parallel", gen->data_parallel, "Replicas (recorded in the trace; one GPU's trace does not change)")
          ->capture_default_str();
      gen_cmd->add_option("--expert-parallel", gen->expert_parallel,
                          "A mixture's experts spread over this many data-parallel ranks (divides --data-parallel): "
                          "experts / it per GPU, the dispatch and combine all-to-alls over them")
          ->capture_default_str();
      gen_cmd->add_option("--stage", gen->stage, "The pipeline stage whose GPU the trace is of, from 0")->capture_default_str();
      gen_cmd->add_flag("--sequence-parallel", gen->sequence_parallel,
                        "Shard norms and dropouts by sequence (reduce-scatter + all-gather for each all-reduce)");
      gen_cmd->add_option("--pipeline-schedule", gen->pipeline_schedule, "1f1b or gpipe")->capture_default_str();
      gen_cmd->add_option("--num-layers-per-virtual-pipeline-stage", gen->layers_per_virtual_stage,
                          "Megatron-LM's interleaved 1F1B: each stage's blocks in chunks of this many (0: not interleaved)")
          ->capture_default_str()
          ->check(CLI::NonNegativeNumber);
      gen_cmd->add_flag("--no-scatter-gather-tensors-in-pipeline", gen->no_scatter_gather,
                        "Send whole activations between stages (Megatron-LM's flag; by default each GPU of a tensor "
                        "group sends 1/tensor and the receivers all-gather)");

      auto show_file = std::make_shared<std::string>();
      auto show_json = std::make_shared<bool>(false);
      CLI::App* show_cmd = app.add_subcommand("show", "Summarize a trace file (units shown; --json for a JSON object)");
      show_cmd->add_option("file", *show_file, "Trace file")->required();
      show_cmd->add_flag("--json", *show_json, "Print the summary as JSON");
      auto show_gpu = std::make_shared<std::string>();
      show_cmd->add_option("--gpu", *show_gpu,
                           "A GPU profile (name or file): also time one block's forward and backward kernels on it");

      CLI::App* models_cmd = app.add_subcommand("models", "List the model catalog");

      auto export_in = std::make_shared<std::string>(), export_out = std::make_shared<std::string>();
      CLI::App* export_cmd = app.add_subcommand(
          "export-chakra", "Write a trace as a Chakra execution trace: .et (protobuf) or JSON, by the output's name (docs/traces.md)");
      export_cmd->add_option("trace", *export_in, "luwusim trace file")->required();
      export_cmd->add_option("-o,--output", *export_out, "Chakra file to write: NAME.et for the protobuf form ASTRA-sim reads, any other name for JSON")->required();

      auto import_in = std::make_shared<std::string>();
      auto import_opts = std::make_shared<GenOptions>();
      auto import_json = std::make_shared<bool>(false);
      CLI::App* import_cmd = app.add_subcommand(
          "import-chakra", "Read a Chakra execution trace (.et, .et.gz or JSON) as a luwusim trace (docs/traces.md)");
      import_cmd->add_option("chakra", *import_in, "Chakra file: .et or .et.gz (protobuf, as Chakra's converter writes), or JSON (chakra_jsonizer's output, the feeder's workload_graph form, or luwusim's)")->required();
      import_cmd->add_option("-o,--output", import_opts->output, "Trace file to write")->required();
      import_cmd->add_option("--model", import_opts->model,
                             "For a graph luwusim did not write: the model it is of (catalog name or JSON file)");
      import_cmd->add_option("--micro-batch", import_opts->micro_batch, "Sequences per micro-batch")->capture_default_str();
      import_cmd->add_option("--seq", import_opts->seq_len, "Tokens per sequence (default: the model's context, at most 2048)");
      import_cmd->add_option("--grad-accum", import_opts->grad_accum, "Micro-batches per iteration")->capture_default_str();
      import_cmd->add_flag("--recompute", import_opts->recompute, "Full activation checkpointing");
      import_cmd->add_flag("--memory-efficient-attention", import_opts->memory_efficient_attention,
                           "Attention without materialized scores");
      import_cmd->add_option("--dtype", import_opts->dtype, "fp16, bf16 or fp32")->capture_default_str();
      import_cmd->add_flag("--json", *import_json, "Print what was used and dropped as JSON");

      return [=]() -> int {
        if (export_cmd->parsed()) return run_export_chakra(*export_in, *export_out);
        if (import_cmd->parsed()) return run_import_chakra(*import_in, *import_opts, *import_json);
        if (gen_cmd->parsed()) return run_gen(*gen);
        if (show_cmd->parsed()) return run_show(*show_file, *show_json, *show_gpu);
        if (models_cmd->parsed()) return run_models();
        return 2;
      };
    });

}  // namespace
