// Measured kernel times from a Kineto profile: kinds by name, and the matching rule of
// workloads/kernel_times.hpp, checked against durations stated by hand.
#include <doctest/doctest.h>

#include <cmath>
#include <map>

#include "common/input_error.hpp"
#include "workloads/kernel_profile.hpp"
#include "workloads/kernel_times.hpp"
#include "workloads/trace.hpp"

using namespace luwu;
using namespace luwu::workloads;

namespace {

// The model and training settings the shipped format example (scenarios/traces) is laid out for.
ModelConfig tiny_gpt() {
  const Json j = {{"name", "tiny-gpt"}, {"layers", 2}, {"hidden", 256}, {"heads", 4}, {"vocab", 1024}, {"max_seq", 512}};
  return model_from_json(JsonNode(j, "inline"));
}

TrainingConfig tiny_training(int grad_accum = 1) {
  TrainingConfig t;
  t.micro_batch = 2;
  t.seq_len = 256;
  t.grad_accum = grad_accum;
  t.memory_efficient_attention = true;
  return t;
}

const std::string kExample = std::string(LUWUSIM_SOURCE_DIR) + "/scenarios/traces/kineto-format-example.json";

// The kernel of a layer's op by name.
const Kernel& kernel(const Trace& t, int layer, OpKind kind, const std::string& name) {
  for (const auto& op : t.ops)
    if (op.layer == layer && op.kind == kind)
      for (const auto& k : t.kernels_of(op))
        if (k.name == name) return k;
  FAIL("no kernel " << name);
  throw;
}

double measured_sum(const Trace& t, KernelKind kind) {
  double sum = 0;
  for (const auto& op : t.ops)
    for (const auto& k : t.kernels_of(op))
      if (k.kind == kind) sum += k.measured_s;
  return sum;
}

bool close(double a, double b) { return std::abs(a - b) <= 1e-12 + 1e-9 * std::abs(b); }

}  // namespace

TEST_CASE("profiled kernels get their kind from their names") {
  CHECK(classify_kernel_name("ampere_fp16_s16816gemm_fp16_128x128_ldg8_f2f_stages_32x5_tn") == ProfiledKind::Gemm);
  CHECK(classify_kernel_name("sm80_xmma_gemm_f16f16_f16f32_f32_nn_n_tilesize96x128x32") == ProfiledKind::Gemm);
  CHECK(classify_kernel_name("void cutlass::Kernel<cutlass_80_tensorop_f16_s16816gemm_relu_f16_64x64_64x4_nn_align8>") ==
        ProfiledKind::Gemm);
  CHECK(classify_kernel_name("void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64>>") == ProfiledKind::Attention);
  // Memory-efficient attention's CUTLASS kernel is attention, not a GEMM.
  CHECK(classify_kernel_name("fmha_cutlassF_f16_aligned_64x64_rf_sm80(PyTorchMemEffAttention::AttentionKernel)") ==
        ProfiledKind::Attention);
  CHECK(classify_kernel_name("ncclDevKernel_AllReduce_Sum_f16_RING_LL(ncclDevComm*)") == ProfiledKind::Communication);
  CHECK(classify_kernel_name("multi_tensor_apply_kernel<FusedAdamMathFunctor<float>>") == ProfiledKind::Optimizer);
  CHECK(classify_kernel_name("void at::native::vectorized_layer_norm_kernel<c10::Half, float>") == ProfiledKind::Elementwise);
  CHECK(classify_kernel_name("void at::native::vectorized_elementwise_kernel<4, GeluCUDAKernelImpl>") ==
        ProfiledKind::Elementwise);
}

TEST_CASE("the format example reads as 27 GEMMs, 4 attention and 36 elementwise kernels in launch order") {
  const KernelProfile p = load_kineto_profile(kExample);
  std::map<ProfiledKind, int> count;
  for (const auto& k : p.kernels) ++count[k.kind];
  CHECK(count[ProfiledKind::Gemm] == 27);
  CHECK(count[ProfiledKind::Attention] == 4);
  CHECK(count[ProfiledKind::Elementwise] == 36);
  CHECK(count[ProfiledKind::Communication] == 2);
  CHECK(count[ProfiledKind::Optimizer] == 1);
  CHECK(p.kernels.size() == 70);  // the CPU op and the memcpy are not kernels
  for (std::size_t i = 1; i < p.kernels.size(); ++i) CHECK(p.kernels[i - 1].start_us < p.kernels[i].start_us);
}

TEST_CASE("GEMMs and attention match in program order, shared kernels take the mean, elementwise is scaled by bytes") {
  Trace t = generate_trace(tiny_gpt(), tiny_training());
  const KernelTimesReport r = apply_kernel_times(t, load_kineto_profile(kExample));
  // The example's i-th GEMM lasts 10 + i us.  One micro-step's GEMMs in program order: block 0's
  // qkv, attention-out, ffn-up, ffn-down (0-3), block 1's (4-7), the LM head (8), its dgrad and
  // wgrad (9, 10), block 1's backward ffn-down, ffn-up, attention-out, qkv, dgrad then wgrad
  // (11-18), block 0's (19-26).  Both blocks' ops share one kernel list: the mean of the two.
  CHECK(close(kernel(t, 1, OpKind::Forward, "qkv").measured_s, (10 + 14) / 2.0 * 1e-6));
  CHECK(close(kernel(t, 1, OpKind::Forward, "ffn-down").measured_s, (13 + 17) / 2.0 * 1e-6));
  CHECK(close(kernel(t, 3, OpKind::Forward, "lm-head").measured_s, 18e-6));
  CHECK(close(kernel(t, 3, OpKind::Backward, "lm-head wgrad").measured_s, 20e-6));
  CHECK(close(kernel(t, 2, OpKind::Backward, "qkv wgrad").measured_s, (28 + 36) / 2.0 * 1e-6));
  // Attention kernels last 20, 30 (forward, blocks 0 and 1), 40, 50 us (backward, blocks 1 and 0).
  CHECK(close(kernel(t, 1, OpKind::Forward, "attention").measured_s, 25e-6));
  CHECK(close(kernel(t, 1, OpKind::Backward, "attention backward").measured_s, 45e-6));
  // 36 elementwise kernels of 3 us against the trace's 22: their 108 us shared out by bytes.
  CHECK(close(measured_sum(t, KernelKind::Elementwise), 108e-6));
  const Kernel& norm = kernel(t, 1, OpKind::Forward, "attention-norm");
  const Kernel& act = kernel(t, 1, OpKind::Forward, "activation");
  CHECK(close(act.measured_s / norm.measured_s, act.bytes / norm.bytes));
  // Every launch measured: sum 0..26 of (10 + i) us = 621 us of GEMMs.
  CHECK(close(measured_sum(t, KernelKind::Gemm), 621e-6));
  CHECK(r.analytic_launches == 0);
  CHECK(r.measured_launches == t.kernel_count());
  CHECK(r.excluded_communication == 2);
  CHECK(r.excluded_optimizer == 1);
  REQUIRE(r.kinds.size() == 3);
  CHECK(r.kinds[0].rule == MatchRule::InOrder);
  CHECK(r.kinds[1].rule == MatchRule::InOrder);
  CHECK(r.kinds[2].rule == MatchRule::Scaled);
  CHECK(r.kinds[2].profiled == 36);
}

TEST_CASE("a profile of two micro-batches averages them, a trace of more micro-steps shares their times") {
  KernelProfile one = load_kineto_profile(kExample), two = one;
  for (const auto& k : one.kernels) {  // the second micro-batch: every kernel 2 us longer
    ProfiledKernel later = k;
    later.start_us += 1e6;
    later.duration_s += 2e-6;
    two.kernels.push_back(later);
  }
  Trace t = generate_trace(tiny_gpt(), tiny_training(3));
  const KernelTimesReport r = apply_kernel_times(t, two);
  CHECK(r.repetitions == 2);
  CHECK(close(kernel(t, 3, OpKind::Forward, "lm-head").measured_s, 19e-6));           // (18 + 20) / 2
  CHECK(close(kernel(t, 1, OpKind::Forward, "qkv").measured_s, (10 + 14 + 12 + 16) / 4.0 * 1e-6));
  // Elementwise: (36 x 3 + 36 x 5) us over 2 micro-batches = 144 us per micro-step, 3 micro-steps.
  CHECK(close(measured_sum(t, KernelKind::Elementwise), 3 * 144e-6));
  CHECK(r.analytic_launches == 0);
}

TEST_CASE("kinds the profile lacks keep the analytic model, and the report counts them") {
  KernelProfile gemms_only = load_kineto_profile(kExample);
  std::erase_if(gemms_only.kernels, [](const ProfiledKernel& k) { return k.kind != ProfiledKind::Gemm; });
  Trace t = generate_trace(tiny_gpt(), tiny_training(2));
  const KernelTimesReport r = apply_kernel_times(t, gemms_only);
  std::uint64_t non_gemm = 0;
  for (const auto& op : t.ops)
    for (const auto& k : t.kernels_of(op)) non_gemm += k.kind != KernelKind::Gemm;
  CHECK(non_gemm > 0);
  CHECK(r.analytic_launches == non_gemm);
  CHECK(r.measured_launches == t.kernel_count() - non_gemm);
  CHECK(r.kinds[1].rule == MatchRule::Analytic);
  CHECK(measured_sum(t, KernelKind::Attention) == 0);
}

TEST_CASE("a bad Kineto profile names the file and the JSON path") {
  auto error_of = [](const Json& doc) -> std::string {
    try {
      kineto_profile_from_json(JsonNode(doc, "p.json"));
    } catch (const InputError& e) {
      return e.what();
    }
    return "";
  };
  const Json kernel = {{"ph", "X"}, {"cat", "kernel"}, {"name", "gemm"}, {"ts", 1.0}, {"dur", 2.0}, {"args", {{"device", 0}}}};
  Json bad_dur = {{"traceEvents", {kernel, kernel}}};
  bad_dur["traceEvents"][1]["dur"] = -1;
  CHECK(error_of(bad_dur).find("$.traceEvents[1].dur") != std::string::npos);
  CHECK(error_of(bad_dur).find("p.json") != std::string::npos);
  Json two_devices = {{"traceEvents", {kernel, kernel}}};
  two_devices["traceEvents"][1]["args"]["device"] = 1;
  CHECK(error_of(two_devices).find("$.traceEvents[1].args.device") != std::string::npos);
  CHECK(error_of(Json{{"events", Json::array()}}).find("traceEvents") != std::string::npos);
  Json no_name = {{"traceEvents", {kernel}}};
  no_name["traceEvents"][0].erase("name");
  CHECK(error_of(no_name).find("$.traceEvents[0]") != std::string::npos);
}

TEST_CASE("a kernel's measured time survives a trace file, and a bad one is refused at its path") {
  Trace t = generate_trace(tiny_gpt(), tiny_training());
  apply_kernel_times(t, load_kineto_profile(kExample));
  Json doc = trace_to_json(t);
  const Trace back = trace_from_json(JsonNode(doc, "t.json"));
  CHECK(back.kernel_lists == t.kernel_lists);
  doc["kernel_lists"][1][0]["measured_s"] = -1e-6;
  CHECK_THROWS_WITH_AS(trace_from_json(JsonNode(doc, "t.json")), doctest::Contains("$.kernel_lists[1][0].measured_s"),
                       InputError);
}
