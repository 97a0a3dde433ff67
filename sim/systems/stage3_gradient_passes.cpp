#include "sim/systems/stage3_gradient_passes.hpp"

#include <cmath>
#include <cstdint>

#include "sim/systems/gpu_collective.hpp"

namespace luwu::sim {

Stage3GradientSettings Stage3GradientSettings::parse(const SystemEntry& entry) {
  Stage3GradientSettings s;
  s.enabled = entry.settings().get_bool("gradient_passes", s.enabled);
  if (entry.has("reduce_bucket_size")) {
    s.reduce_bucket_size = entry.at("reduce_bucket_size").as_positive();
    if (s.reduce_bucket_size > 1e15) entry.at("reduce_bucket_size").fail("expected at most 1e15 elements");
  }
  s.contiguous_gradients = entry.settings().get_bool("contiguous_gradients", s.contiguous_gradients);
  return s;
}

namespace {

// A Backward op's gradient tensors, in its kernels' order: each sub-module's parameters, and what
// the op's gradient holds beyond them (a tied matrix's other use) as one more.
std::vector<double> gradient_tensors(const workloads::Trace& trace, const workloads::TraceOp& op) {
  std::vector<double> tensors;
  double listed = 0;
  for (const auto& k : trace.kernels_of(op))
    if (k.params > 0) {
      tensors.push_back(static_cast<double>(k.params));
      listed += static_cast<double>(k.params);
    }
  const double elements = static_cast<double>(op.grad_bytes) / workloads::bytes_per_element(trace.training.dtype);
  if (elements > listed) tensors.push_back(elements - listed);
  return tensors;
}

}  // namespace

std::vector<double> stage3_bucket_pass_bytes(const workloads::Trace& trace, const Stage3GradientSettings& settings,
                                             int world, bool interleave) {
  const double e = workloads::bytes_per_element(trace.training.dtype);
  std::vector<double> bytes(trace.ops.size(), 0);
  if (!settings.enabled) return bytes;
  struct Entry {
    std::size_t op;
    double elements;
  };
  std::vector<Entry> bucket;
  double in_bucket = 0;
  auto reduce = [&] {  // the bucket's reduce_scatter_coalesced
    const bool one_even = bucket.size() == 1 && std::fmod(bucket.front().elements, static_cast<double>(world)) == 0;
    if (interleave)  // torch.cat (unless one tensor divides evenly), then div_
      for (const Entry& t : bucket) bytes[t.op] += (one_even ? 2 : 4) * e * t.elements;
    bucket.clear();
    in_bucket = 0;
  };
  int micro_step = -1;
  for (std::size_t i = 0; i < trace.ops.size(); ++i) {
    const auto& op = trace.ops[i];
    if (op.kind != workloads::OpKind::Backward || op.grad_bytes == 0) continue;
    if (op.micro_step != micro_step) {  // the previous micro-step's epilogue reduced what was left
      reduce();
      micro_step = op.micro_step;
    }
    for (double n : gradient_tensors(trace, op)) {
      if (in_bucket > 0 && in_bucket + n > settings.reduce_bucket_size) reduce();
      if (settings.contiguous_gradients && in_bucket + n < settings.reduce_bucket_size) bytes[i] += 2 * e * n;
      bucket.push_back({i, n});
      in_bucket += n;
    }
  }
  reduce();
  return bytes;
}

double stage3_partition_pass_bytes_per_element(double element_bytes, bool offloaded, int micro_step, bool boundary) {
  const double e = element_bytes;
  double bytes = 2 * (e + 2);  // isinf(g).any(), isnan(g).any()
  if (!offloaded) return bytes + (micro_step == 0 ? 2 * e : 3 * e);
  if (micro_step > 0) bytes += 3 * e;  // the host's partition, brought back, accumulated on the GPU
  if (boundary) bytes += (e + 8 + 8) + (e == 4 ? 0 : e + 4);  // fp64 norm; .float()
  return bytes;
}

Stage3GradientPasses::Stage3GradientPasses(RankEnv& env, const Stage3GradientSettings& settings, int world,
                                           bool offloaded, bool interleave)
    : env_(env),
      settings_(settings),
      world_(world),
      offloaded_(offloaded),
      bucket_bytes_(stage3_bucket_pass_bytes(env.trace(), settings, world, interleave)),
      stream_(env.gpu.name(), "reduce-and-partition", "communication", env.gpu.host(), &env.cluster.timeline) {}

std::vector<CompletionPtr> Stage3GradientPasses::before_reduce(std::size_t i, const std::string& label) {
  if (bucket_bytes_[i] <= 0) return {};
  return {enqueue_stream_kernel(stream_, env_, bucket_bytes_[i], "gradient bucket copies " + label)};
}

CompletionPtr Stage3GradientPasses::after_reduce(std::size_t i, const CompletionPtr& reduced, const std::string& label) {
  const auto& trace = env_.trace();
  const auto& op = trace.ops[i];
  const double element = workloads::bytes_per_element(trace.training.dtype);
  const double bytes = static_cast<double>(op.grad_bytes) / element / world_ *
                       stage3_partition_pass_bytes_per_element(settings_, element, offloaded_, op.micro_step,
                                                               op.micro_step == trace.training.grad_accum - 1);
  if (bytes <= 0) return reduced;
  return enqueue_stream_kernel(stream_, env_, bytes, "gradient partition checks " + label, {reduced});
}

}  // namespace luwu::sim
