#include "workloads/parallel_layout.hpp"

#include <stdexcept>

namespace luwu::workloads {

std::string to_string(PipelineSchedule s) { return s == PipelineSchedule::OneFOneB ? "1f1b" : "gpipe"; }

const Choices<PipelineSchedule>& pipeline_schedule_choices() {
  static const Choices<PipelineSchedule> choices = choices_by_name({PipelineSchedule::OneFOneB, PipelineSchedule::GPipe});
  return choices;
}

namespace {

std::optional<LayoutProblem> range_problem(const char* field, int value, int max) {
  if (value >= 1 && value <= max) return std::nullopt;
  return LayoutProblem{field, std::string(field) + " parallelism must be in [1, " + std::to_string(max) + "], got " +
                                  std::to_string(value)};
}

// "tensor 8 must divide heads (12)".
std::optional<LayoutProblem> divides(int tensor, long long n, const std::string& what) {
  if (n % tensor == 0) return std::nullopt;
  return LayoutProblem{"tensor", "tensor parallelism " + std::to_string(tensor) + " must divide " + what + " (" +
                                     std::to_string(n) + ")"};
}

}  // namespace

std::optional<LayoutProblem> layout_problem(const ModelConfig& m, const TrainingConfig& t, const ParallelLayout& l) {
  if (auto p = range_problem("tensor", l.tensor, kMaxTensorParallel)) return p;
  if (auto p = range_problem("pipeline", l.pipeline, kMaxPipelineParallel)) return p;
  if (auto p = range_problem("data", l.data, kMaxDataParallel)) return p;
  // Megatron-LM's split needs whole heads, whole kv groups and whole columns on every GPU.
  if (auto p = divides(l.tensor, m.heads, "the heads")) return p;
  if (auto p = divides(l.tensor, m.kv_heads, "the kv heads")) return p;
  if (auto p = divides(l.tensor, m.hidden, "the hidden width")) return p;
  if (auto p = divides(l.tensor, m.ffn_hidden, "the FFN width")) return p;
  if (auto p = divides(l.tensor, m.kv_width(), "the K and V width")) return p;
  if (l.pipeline > m.layers)
    return LayoutProblem{"pipeline", "pipeline parallelism " + std::to_string(l.pipeline) + " exceeds " + m.name + "'s " +
                                         std::to_string(m.layers) + " blocks: every stage needs at least one"};
  if (l.sequence_parallel && l.tensor == 1)
    return LayoutProblem{"sequence_parallel", "sequence parallelism shards over the tensor-parallel group: it needs "
                                              "tensor parallelism above 1"};
  if (l.sequence_parallel && t.seq_len % l.tensor != 0)
    return LayoutProblem{"sequence_parallel", "sequence parallelism needs the sequence length (" +
                                                  std::to_string(t.seq_len) + ") divisible by tensor parallelism (" +
                                                  std::to_string(l.tensor) + ")"};
  return std::nullopt;
}

void validate_layout(const ModelConfig& model, const TrainingConfig& training, const ParallelLayout& layout) {
  if (auto p = layout_problem(model, training, layout)) throw std::invalid_argument(p->message);
}

StageBlocks stage_blocks(int blocks, int pipeline, int stage) {
  if (pipeline < 1 || pipeline > blocks || stage < 0 || stage >= pipeline)
    throw std::invalid_argument("stage " + std::to_string(stage) + " of " + std::to_string(pipeline) + " over " +
                                std::to_string(blocks) + " blocks");
  const int base = blocks / pipeline, extra = blocks % pipeline;
  return {stage * base + std::min(stage, extra), base + (stage < extra ? 1 : 0)};
}

ParallelLayout layout_from_json(const JsonNode& node, const ModelConfig& model, const TrainingConfig& training) {
  node.only_keys({"tensor", "pipeline", "data", "sequence_parallel", "pipeline_schedule"});
  ParallelLayout l;
  l.tensor = static_cast<int>(node.get_int("tensor", l.tensor, 1, kMaxTensorParallel));
  l.pipeline = static_cast<int>(node.get_int("pipeline", l.pipeline, 1, kMaxPipelineParallel));
  l.data = static_cast<int>(node.get_int("data", l.data, 1, kMaxDataParallel));
  l.sequence_parallel = node.get_bool("sequence_parallel", l.sequence_parallel);
  if (node.has("pipeline_schedule"))
    l.pipeline_schedule = node.at("pipeline_schedule").as_choice(pipeline_schedule_choices(), "pipeline schedule");
  if (auto p = layout_problem(model, training, l)) {
    if (node.has(p->field)) node.at(p->field).fail(p->message);
    node.fail(p->message);
  }
  return l;
}

Json layout_to_json(const ParallelLayout& l) {
  return Json{{"tensor", l.tensor},
              {"pipeline", l.pipeline},
              {"data", l.data},
              {"sequence_parallel", l.sequence_parallel},
              {"pipeline_schedule", to_string(l.pipeline_schedule)}};
}

}  // namespace luwu::workloads
