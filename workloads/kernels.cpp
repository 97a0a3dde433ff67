#include "workloads/kernels.hpp"

#include <algorithm>

namespace luwu::workloads {

std::string to_string(KernelKind k) {
  switch (k) {
    case KernelKind::Gemm: return "gemm";
    case KernelKind::Attention: return "attention";
    case KernelKind::Elementwise: return "elementwise";
  }
  return "?";
}

namespace {

struct Dims {
  double T, b, s, h, a, kv, f, V, e;
  bool swiglu, fused_attention, biases, separate_qkv;
  int score_passes;
  AttentionScores scores_kind;
  int layout_copies;
  std::uint64_t norm_params;
  double t;           // tensor-parallel GPUs: the split regions' widths are / t
  double T_whole;     // tokens of the tensors outside them: T, or T / t with sequence parallelism
  double experts;     // mixture of experts: E (0: a dense FFN)
  double topk;        // experts per token
  double rows;        // the GEMM rows of each expert (expert_rows)
  double fe;          // each expert's inner width (expert_width)
  double fs;          // the shared experts' FFN width (0: none)
  double ep;          // expert-parallel GPUs: this one holds experts / ep, each running ep x rows
};

Kernel with_params(Kernel k, double matrix, double bias, bool biases) {
  k.params = static_cast<std::uint64_t>(matrix + (biases ? bias : 0));
  return k;
}

Kernel gemm(std::string name, double m, double n, double k, double e, double batch = 1) {
  Kernel g;
  g.name = std::move(name);
  g.kind = KernelKind::Gemm;
  g.flops = 2 * batch * m * n * k;
  g.bytes = e * batch * (m * k + k * n + m * n);
  g.output_elements = batch * m * n;
  g.gemm = {static_cast<std::int64_t>(m), static_cast<std::int64_t>(n), static_cast<std::int64_t>(k),
            static_cast<std::int64_t>(batch)};
  return g;
}

Kernel elementwise(std::string name, double bytes, double output_elements, double reduction_bytes = 0) {
  Kernel k;
  k.name = std::move(name);
  k.kind = KernelKind::Elementwise;
  k.bytes = bytes;
  k.reduction_bytes = reduction_bytes;
  k.output_elements = output_elements;
  return k;
}

// Fused (memory-efficient) attention: one kernel moving Q, K, V and its output.
Kernel fused_attention(const Dims& d) {
  Kernel k;
  k.name = "attention";
  k.kind = KernelKind::Attention;
  k.flops = 4 * d.b * d.s * d.s * (d.h / d.t);
  k.bytes = d.e * d.T * (2 * d.h + 2 * d.kv) / d.t;
  k.output_elements = d.T * d.h / d.t;
  return k;
}

// The elementwise passes over the attention scores, one kernel (its backward moves 3 of its 2 tensors).
constexpr const char* kScorePasses = "attention-softmax";
// The layout copies beside an unfused attention, one kernel (its backward copies as many back).
constexpr const char* kLayoutCopies = "attention-layout";

// The kernels over the N = b (a / t) s^2 scores between Q K^T and scores x V (training_config.hpp
// AttentionScores), forward; bytes are the least each must move, e per element, 1 per boolean.
constexpr const char* kMaskAdd = "attention-mask-add";
constexpr const char* kClamp = "attention-clamp";
constexpr const char* kMaskFill = "attention-mask-fill";

Kernel broadcast_kernel(std::string name, double bytes, double output_elements) {
  Kernel k = elementwise(std::move(name), bytes, output_elements);
  k.broadcast_bytes = bytes;
  return k;
}

std::vector<Kernel> score_kernels(const Dims& d) {
  const double N = d.b * (d.a / d.t) * d.s * d.s;
  const Kernel softmax = elementwise(kScorePasses, d.e * 2 * N, N, d.e * 2 * N);
  switch (d.scores_kind) {
    case AttentionScores::Passes:
      // One pass is the softmax, a row reduction; the others (mask, clamp, dropout) stream.
      if (d.score_passes == 0) return {};
      return {elementwise(kScorePasses, d.e * 2 * d.score_passes * N, N, d.e * 2 * N)};
    case AttentionScores::HuggingFaceOpt:
      // + attention_mask: reads the scores and the [b, 1, s, s] mask once, writes the sum;
      // torch.max against a 0-dim tensor: reads and writes them.
      return {broadcast_kernel(kMaskAdd, d.e * (2 * N + d.b * d.s * d.s), N), broadcast_kernel(kClamp, d.e * 2 * N, N),
              softmax};
    case AttentionScores::MaskedFill: {
      // The clone (a copy) and the fill in place, which reads the [s, s] booleans once.
      Kernel fill = elementwise(kMaskFill, d.e * 4 * N + d.s * d.s, N);
      fill.broadcast_bytes = d.e * 2 * N + d.s * d.s;
      return {fill, softmax};
    }
  }
  return {};
}

// The backward of one of score_kernels' kernels (none: the gradient passes through).
std::vector<Kernel> score_kernel_backward(const Kernel& fwd, const Dims& d) {
  const double N = fwd.output_elements;
  const std::string name = fwd.name + " backward";
  if (fwd.name == kScorePasses) {
    if (d.scores_kind == AttentionScores::Passes) {
      // A pass over the scores reads its saved tensor and the gradient and writes one: 3 of its 2.
      Kernel k = fwd;
      k.name = name;
      k.bytes = 1.5 * fwd.bytes;
      k.reduction_bytes = 1.5 * fwd.reduction_bytes;
      return {k};
    }
    // The softmax's backward reads its output and the gradient and writes one; it streams
    // (cunn_SoftMaxBackwardSmem at the copy rate on the H100 and H200 measured, block.json).
    return {elementwise(name, d.e * 3 * N, N)};
  }
  if (fwd.name == kClamp) {
    // grad / 2 (2 e), self == other (e + 1, broadcast), where (3 e + 1), self < other (e + 1,
    // broadcast), masked_fill_ in place (2 e + 1): (9 e + 4) N.
    Kernel k = elementwise(name, (9 * d.e + 4) * N, N);
    k.broadcast_bytes = 2 * (d.e + 1) * N;
    return {k};
  }
  if (fwd.name == kMaskFill) {  // grad.masked_fill(mask, 0): the same clone and fill
    Kernel k = fwd;
    k.name = name;
    return {k};
  }
  return {};  // kMaskAdd: its gradient is the sum's
}

bool is_score_kernel(const std::string& name) {
  return name == kScorePasses || name == kMaskAdd || name == kClamp || name == kMaskFill;
}

// Unfused attention on this GPU's a / t heads: Q K^T, the kernels over the scores, scores x V.
std::vector<Kernel> unfused_attention(const Dims& d) {
  const double heads = d.a / d.t, head_dim = d.h / d.a, batch = d.b * heads;
  std::vector<Kernel> out;
  if (d.layout_copies > 0)
    out.push_back(elementwise(kLayoutCopies, d.e * 2 * d.layout_copies * d.T * (d.h / d.t), d.T * (d.h / d.t)));
  out.push_back(gemm("attention-scores", d.s, d.s, head_dim, d.e, batch));
  for (auto& k : score_kernels(d)) out.push_back(std::move(k));
  out.push_back(gemm("attention-context", d.s, head_dim, d.s, d.e, batch));
  return out;
}

// Backward of a GEMM C[m x n] = A[m x k] B[k x n]: dA = dC B^T, then dB = A^T dC.
void backward_gemm(std::vector<Kernel>& out, const Kernel& fwd, double e) {
  const double m = static_cast<double>(fwd.gemm.m), n = static_cast<double>(fwd.gemm.n),
               k = static_cast<double>(fwd.gemm.k);
  const double batch = static_cast<double>(fwd.gemm.batch);
  // Both move the forward's three matrices and do its FLOPs (kept as computed: a shape's integer
  // dims can round a width such as GPT-3 13B's head of 5140 / 40 = 128.5).
  for (Kernel g : {gemm(fwd.name + " dgrad", m, k, n, e, batch), gemm(fwd.name + " wgrad", k, n, m, e, batch)}) {
    g.flops = fwd.flops;
    g.bytes = fwd.bytes;
    out.push_back(std::move(g));
  }
  out[out.size() - 2].params = fwd.params;  // the module's weight is needed from the dgrad on
}

// The FFN: up, the activation, down.
std::vector<Kernel> dense_ffn(const Dims& d) {
  const double up = d.swiglu ? 2 * d.f : d.f;
  return {with_params(gemm("ffn-up", d.T, up / d.t, d.h, d.e), d.h * (up / d.t), up / d.t, d.biases),
          elementwise("activation", d.e * (d.swiglu ? 3 : 2) * d.T * (d.f / d.t), d.T * (d.f / d.t)),
          with_params(gemm("ffn-down", d.T, d.h, d.f / d.t, d.e), (d.f / d.t) * d.h, d.h, d.biases)};
}

// A mixture of experts' FFN, as grouped-GEMM implementations run it (MegaBlocks, Megatron-Core's
// grouped GEMM): the router's GEMM and its top-k, the tokens permuted into expert order (each
// token copied to its k experts), every expert's up, activation and down as one batched kernel
// of E GEMMs of `rows` rows each, and the weighted combine of each token's k outputs.
std::vector<Kernel> expert_ffn(const Dims& d) {
  const double up = d.swiglu ? 2 * d.fe : d.fe, E = d.experts, rows = E * d.rows;
  const double local = E / d.ep, local_rows = d.rows * d.ep;  // this GPU's experts and their rows
  Kernel router = gemm("router", d.T, E, d.h, d.e);
  router.params = static_cast<std::uint64_t>(d.h * E);
  std::vector<Kernel> out{
      router,
      elementwise("router-topk", d.e * (d.T * E + 2 * d.T * d.topk), d.T * d.topk),
      elementwise("dispatch", d.e * (d.T * d.h + rows * d.h), rows * d.h),
      with_params(gemm("experts-up", local_rows, up / d.t, d.h, d.e, local), local * d.h * (up / d.t), local * (up / d.t),
                  d.biases),
      elementwise("activation", d.e * (d.swiglu ? 3 : 2) * rows * (d.fe / d.t), rows * (d.fe / d.t)),
      with_params(gemm("experts-down", local_rows, d.h, d.fe / d.t, d.e, local), local * (d.fe / d.t) * d.h, local * d.h,
                  d.biases),
      elementwise("combine", d.e * (rows * d.h + d.T * d.h), d.T * d.h)};
  if (d.fs > 0) {  // DeepSeekMoE's shared experts: one FFN on every token, added to the routed output
    const double shared_up = d.swiglu ? 2 * d.fs : d.fs;
    out.push_back(with_params(gemm("shared-experts-up", d.T, shared_up / d.t, d.h, d.e), d.h * (shared_up / d.t),
                              shared_up / d.t, d.biases));
    out.push_back(elementwise("shared-activation", d.e * (d.swiglu ? 3 : 2) * d.T * (d.fs / d.t), d.T * (d.fs / d.t)));
    out.push_back(with_params(gemm("shared-experts-down", d.T, d.h, d.fs / d.t, d.e), (d.fs / d.t) * d.h, d.h, d.biases));
    out.push_back(elementwise("shared-add", d.e * 3 * d.T * d.h, d.T * d.h));
  }
  return out;
}

// Column-parallel GEMMs (QKV, FFN up) have n / t output features, row-parallel ones
// (attention-out, FFN down) k / t input features and a whole bias; the norms, dropouts and residual
// adds run on T_whole tokens.
std::vector<Kernel> block_forward(const Dims& d) {
  const double qkv = d.h + 2 * d.kv;
  const double norm_bytes = d.e * 2 * d.T_whole * d.h;
  Kernel attention_norm = elementwise("attention-norm", norm_bytes, d.T_whole * d.h, norm_bytes);
  Kernel ffn_norm = elementwise("ffn-norm", d.e * 5 * d.T_whole * d.h, d.T_whole * d.h, norm_bytes);
  attention_norm.params = ffn_norm.params = d.norm_params;
  std::vector<Kernel> out{attention_norm};
  if (d.separate_qkv) {  // q_proj, k_proj, v_proj: the fused GEMM's columns as three GEMMs
    for (const auto& [name, width] : {std::pair{"q", d.h}, std::pair{"k", d.kv}, std::pair{"v", d.kv}})
      out.push_back(with_params(gemm(name, d.T, width / d.t, d.h, d.e), d.h * (width / d.t), width / d.t, d.biases));
  } else {
    out.push_back(with_params(gemm("qkv", d.T, qkv / d.t, d.h, d.e), d.h * (qkv / d.t), qkv / d.t, d.biases));
  }
  if (d.fused_attention) {
    out.push_back(fused_attention(d));
  } else {
    for (auto& k : unfused_attention(d)) out.push_back(std::move(k));
  }
  out.push_back(with_params(gemm("attention-out", d.T, d.h, d.h / d.t, d.e), (d.h / d.t) * d.h, d.h, d.biases));
  out.push_back(ffn_norm);
  for (auto& k : d.experts > 0 ? expert_ffn(d) : dense_ffn(d)) out.push_back(std::move(k));
  out.push_back(elementwise("residual", d.e * 3 * d.T_whole * d.h, d.T_whole * d.h));
  return out;
}

std::vector<Kernel> backward_of(const std::vector<Kernel>& forward, const Dims& d) {
  std::vector<Kernel> out;
  for (auto it = forward.rbegin(); it != forward.rend(); ++it) {
    switch (it->kind) {
      case KernelKind::Gemm: backward_gemm(out, *it, d.e); break;
      case KernelKind::Attention: {
        Kernel k = *it;
        k.name += " backward";
        k.flops = 2 * it->flops + (d.fused_attention ? 2 * d.b * d.s * d.s * (d.h / d.t) : 0);
        k.bytes = 2 * it->bytes;
        out.push_back(k);
        break;
      }
      case KernelKind::Elementwise: {
        if (is_score_kernel(it->name)) {
          for (auto& k : score_kernel_backward(*it, d)) out.push_back(std::move(k));
          break;
        }
        Kernel k = *it;
        k.name += " backward";
        const double scale = it->name == kLayoutCopies ? 1 : 2;
        k.bytes = scale * it->bytes;
        k.reduction_bytes = scale * it->reduction_bytes;
        out.push_back(k);
        break;
      }
    }
  }
  return out;
}

// A module without parameters of its own spans forward kernels [first, last] (kernels.hpp).
struct ModuleSpan {
  std::size_t first, last;
};

std::size_t index_of(const std::vector<Kernel>& kernels, const std::string& name) {
  for (std::size_t i = 0; i < kernels.size(); ++i)
    if (kernels[i].name == name) return i;
  return kernels.size();
}

// A block's parameterless modules, as Hugging Face's decoder layers nest them.
std::vector<ModuleSpan> block_modules(const std::vector<Kernel>& f, const Dims& d) {
  std::vector<ModuleSpan> spans{{0, f.size() - 1}, {index_of(f, d.separate_qkv ? "q" : "qkv"), index_of(f, "attention-out")}};
  if (d.experts > 0) {
    spans.push_back({index_of(f, "router"), index_of(f, d.fs > 0 ? "shared-add" : "combine")});
  } else {
    const std::size_t act = index_of(f, "activation");
    spans.push_back({act, act});
    if (d.swiglu) spans.push_back({index_of(f, "ffn-up"), index_of(f, "ffn-down")});
  }
  return spans;
}

// Each span counts at its first kernel in forward and at its last kernel's first backward kernel.
void count_modules(std::vector<Kernel>& kernels, const std::vector<Kernel>& forward, const std::vector<ModuleSpan>& spans,
                   bool backward) {
  for (const ModuleSpan& span : spans) {
    if (!backward) {
      ++kernels.at(span.first).parameterless_modules;
      continue;
    }
    std::size_t at = 0;  // backward runs the forward kernels after `last` first, a GEMM as two
    for (std::size_t j = span.last + 1; j < forward.size(); ++j) at += forward[j].kind == KernelKind::Gemm ? 2 : 1;
    ++kernels.at(at).parameterless_modules;
  }
}

}  // namespace

std::vector<Kernel> layer_kernels(const ModelConfig& m, const TrainingConfig& t, LayerKind layer, OpKind op,
                                  const TensorSharding& tp) {
  Dims d{};
  d.b = t.micro_batch;
  d.s = t.seq_len;
  d.T = d.b * d.s;
  d.h = m.hidden;
  d.a = m.heads;
  d.kv = static_cast<double>(m.kv_width());
  d.f = m.ffn_hidden;
  d.V = static_cast<double>(tp.vocab_rows(static_cast<std::uint64_t>(m.vocab)));
  d.e = static_cast<double>(bytes_per_element(t.dtype));
  d.swiglu = m.ffn_kind == FfnKind::SwiGlu;
  d.fused_attention = t.memory_efficient_attention;
  d.score_passes = t.attention_score_passes;
  d.scores_kind = t.attention_scores;
  d.layout_copies = t.attention_layout_copies;
  d.biases = m.biases;
  d.separate_qkv = m.separate_qkv;
  d.norm_params = norm_params(m);
  d.t = tp.tensor;
  d.T_whole = tp.sequence_parallel ? d.T / d.t : d.T;
  d.experts = m.experts;
  d.topk = m.experts_per_token;
  d.rows = static_cast<double>(expert_rows(m, t));
  d.fe = m.expert_width();
  d.fs = static_cast<double>(m.shared_experts) * m.expert_width();
  d.ep = tp.expert;

  const bool backward = op == OpKind::Backward;
  std::vector<Kernel> forward;
  std::vector<ModuleSpan> modules;
  switch (layer) {
    case LayerKind::Embedding:
      // Backward is a scatter-add of the same size as the gather, not twice it.
      forward = {elementwise(backward ? "embedding-grad" : "embedding", d.e * 3 * d.T * d.h, d.T * d.h)};
      forward.front().params = sharded_layer_info(m, t, tp, LayerKind::Embedding).params;
      // The causal-LM, model and decoder modules begin here; their backward ends here.
      if (!backward) forward.front().parameterless_modules = 3;
      return forward;
    case LayerKind::Transformer:
      forward = block_forward(d);
      modules = block_modules(forward, d);
      break;
    case LayerKind::Head:
      forward = {elementwise("final-norm", d.e * 2 * d.T_whole * d.h, d.T_whole * d.h, d.e * 2 * d.T_whole * d.h),
                 gemm("lm-head", d.T, d.V, d.h, d.e),
                 elementwise("cross-entropy", 8 * d.T * d.V, d.T * d.V)};
      forward[0].params = d.norm_params;
      forward[1].params = static_cast<std::uint64_t>(d.V) * static_cast<std::uint64_t>(m.hidden);  // tied or not, the head multiplies by it
      // The causal-LM module's output is the loss (its backward begins at the cross entropy's);
      // the model's and decoder's is the final norm's.
      modules = {{0, 2}, {0, 0}, {0, 0}};
      if (!backward) modules.clear();  // their forward began at the embedding
      break;
  }
  std::vector<Kernel> out = backward ? backward_of(forward, d) : forward;
  count_modules(out, forward, modules, backward);
  return out;
}

}  // namespace luwu::workloads
