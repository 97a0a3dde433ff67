#include "workloads/tensor_collectives.hpp"

namespace luwu::workloads {

namespace {

std::vector<TensorCollective> tensor_parallel(const ModelConfig& m, const TrainingConfig& t, const TensorSharding& tp,
                                              LayerKind layer, OpKind pass) {
  if (tp.tensor == 1) return {};
  const std::uint64_t tokens = static_cast<std::uint64_t>(t.micro_batch) * static_cast<std::uint64_t>(t.seq_len);
  const std::uint64_t B = tokens * static_cast<std::uint64_t>(m.hidden) * bytes_per_element(t.dtype);
  const TensorCollective all_reduce{OpKind::TensorAllReduce, B}, all_gather{OpKind::TensorAllGather, B},
      reduce_scatter{OpKind::TensorReduceScatter, B};
  const bool sp = tp.sequence_parallel, backward = pass == OpKind::Backward;
  switch (layer) {
    case LayerKind::Transformer:
      if (!backward) return sp ? std::vector{all_gather, reduce_scatter, all_gather, reduce_scatter}
                               : std::vector{all_reduce, all_reduce};
      return sp ? std::vector{all_gather, all_gather, reduce_scatter, all_gather, all_gather, reduce_scatter}
                : std::vector{all_reduce, all_reduce};
    case LayerKind::Embedding:
      if (pass == OpKind::Recompute) return {};
      if (!backward) return {sp ? reduce_scatter : all_reduce};
      if (sp) return {all_gather};
      return {};
    case LayerKind::Head: {
      if (pass == OpKind::Recompute) return {};
      if (backward) return sp ? std::vector{all_gather, reduce_scatter} : std::vector{all_reduce};
      const TensorCollective cross_entropy{OpKind::TensorAllReduce, 4 * tokens};
      std::vector<TensorCollective> out;
      if (sp) out.push_back(all_gather);
      out.insert(out.end(), 3, cross_entropy);
      return out;
    }
  }
  return {};
}

}  // namespace

std::vector<TensorCollective> tensor_collectives(const ModelConfig& m, const TrainingConfig& t, const TensorSharding& tp,
                                                 LayerKind layer, OpKind pass) {
  std::vector<TensorCollective> out = tensor_parallel(m, t, tp, layer, pass);
  if (layer == LayerKind::Transformer && m.moe() && tp.expert > 1) {
    // The dispatch and the combine: every expert's rows of this GPU's tokens, E x expert_rows x h.
    const std::uint64_t rows = static_cast<std::uint64_t>(m.experts) * expert_rows(m, t);
    const TensorCollective all_to_all{OpKind::ExpertAllToAll, rows * static_cast<std::uint64_t>(m.hidden) * bytes_per_element(t.dtype)};
    out.insert(out.end(), 2, all_to_all);
  }
  return out;
}

}  // namespace luwu::workloads
