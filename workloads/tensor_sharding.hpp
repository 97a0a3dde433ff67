#pragma once
// How one GPU of a tensor-parallel group holds a layer: Megatron-LM's split (Shoeybi et al. 2019,
// arXiv 1909.08053, section 3) over `tensor` GPUs, optionally with sequence parallelism
// (Korthikanti et al. 2022, arXiv 2205.05198, section 4.2.2).
//   - QKV and FFN up are column-parallel (output features / tensor, their biases too), attention-out
//     and FFN down row-parallel (input features / tensor; their biases are added after the
//     reduction, so every GPU holds them whole); attention heads (and kv heads) are split.
//   - Layer norms, position embeddings and the row-parallel biases are replicated.  Without
//     sequence parallelism the norms, dropouts and residual adds run on the whole b x s x h tensor
//     on every GPU; with it on s / tensor of the sequence.
//   - The embedding and the LM head are vocab-parallel: ceil(vocab / tensor) rows each.
//     Megatron-LM pads the vocabulary to a multiple of 128 x tensor instead
//     (--make-vocab-size-divisible-by); luwusim pads only to the next multiple of tensor, fewer
//     than tensor rows, so that tensor 1 is the unsharded model exactly.
// tensor 1 (the default) is the whole layer: every count equals layer_accounting's.
#include <cstdint>

namespace luwu::workloads {

struct TensorSharding {
  int tensor = 1;
  bool sequence_parallel = false;
  // Expert parallelism (a mixture of experts; parallel_layout.hpp): this GPU holds experts / expert
  // of every block's experts and runs the tokens of all `expert` GPUs of its group through them.
  int expert = 1;

  // A dimension split over the group (the caller checked it divides).
  std::uint64_t split(std::uint64_t n) const { return n / static_cast<std::uint64_t>(tensor); }
  // A tensor that is replicated without sequence parallelism and sequence-sharded with it.
  std::uint64_t sequence_split(std::uint64_t n) const { return sequence_parallel ? split(n) : n; }
  // Vocabulary rows per GPU.
  std::uint64_t vocab_rows(std::uint64_t vocab) const {
    const auto t = static_cast<std::uint64_t>(tensor);
    return (vocab + t - 1) / t;
  }

  bool operator==(const TensorSharding&) const = default;
};

}  // namespace luwu::workloads
