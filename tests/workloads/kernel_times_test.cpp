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

TEST_CASE("the classification table: ROCm, DeepEP, copies and layout kernels, and a communication stream's kernels") {
  CHECK(classify_kernel_name("Cijk_Alik_Bljk_HHS_BH_MT128x128x32_MI32x32x8x1_SN_1LDSB0") == ProfiledKind::Gemm);
  CHECK(classify_kernel_name("void deep_ep::intranode::dispatch<8, 768>(...)") == ProfiledKind::Communication);
  CHECK(classify_kernel_name("ncclKernel_AllGather_RING_LL_Sum_int8_t") == ProfiledKind::Communication);
  CHECK(classify_kernel_name("rcclKernel_AllReduce") == ProfiledKind::Communication);
  CHECK(classify_kernel_name("Memcpy DtoD (Device -> Device)") == ProfiledKind::Copy);
  CHECK(classify_kernel_name("void cutlass::transpose_kernel<cutlass::half_t>") == ProfiledKind::Elementwise);
  CHECK(classify_kernel_name("sm90_xmma_gemm_bf16bf16_bf16f32") == ProfiledKind::Gemm);
  // A kernel that runs on the stream of a NCCL kernel is communication, whatever its name.
  const Json k = {{"ph", "X"}, {"cat", "kernel"}, {"ts", 1.0}, {"dur", 2.0}};
  Json doc = {{"traceEvents", Json::array()}};
  for (auto [name, stream] : {std::pair{"ncclDevKernel_AllReduce", 20}, {"void elementwise_helper", 20}, {"sm80_gemm", 7}}) {
    Json e = k;
    e["name"] = name;
    e["args"] = {{"stream", stream}};
    doc["traceEvents"].push_back(e);
  }
  const KernelProfile p = kineto_profile_from_json(JsonNode(doc, "p.json"));
  REQUIRE(p.kernels.size() == 3);
  CHECK(p.kernels[1].kind == ProfiledKind::Communication);
  CHECK(p.kernels[1].on_communication_stream);
  CHECK(p.kernels[2].kind == ProfiledKind::Gemm);
}

namespace {

// A profile of `totals.size()` steps: step i (numbered from 10) launches one GEMM of totals[i] us
// through a runtime call inside its ProfilerStep window; the GEMM itself runs after the window,
// as GPU work lags the host.
Json stepped_profile(const std::vector<double>& totals) {
  Json events = Json::array();
  for (std::size_t i = 0; i < totals.size(); ++i) {
    const double t0 = 1000.0 * static_cast<double>(i);
    events.push_back({{"ph", "X"}, {"cat", "user_annotation"}, {"name", "ProfilerStep#" + std::to_string(10 + i)}, {"ts", t0},
                      {"dur", 100.0}});
    events.push_back({{"ph", "X"}, {"cat", "cuda_runtime"}, {"name", "cudaLaunchKernel"}, {"ts", t0 + 50}, {"dur", 5.0},
                      {"args", {{"correlation", 100 + i}}}});
    events.push_back({{"ph", "X"}, {"cat", "kernel"}, {"name", "sm80_gemm"}, {"ts", t0 + 500}, {"dur", totals[i]},
                      {"args", {{"correlation", 100 + i}, {"device", 0}}}});
  }
  return {{"deviceProperties", {{{"id", 0}, {"name", "NVIDIA A100-SXM4-40GB"}}}}, {"traceEvents", events}};
}

}  // namespace

TEST_CASE("a profile of several steps: the median step by default, or the step asked for, the others left out") {
  const Json doc = stepped_profile({30, 10, 50, 20, 40});  // steps 10..14; sorted 10, 20, 30, 40, 50: the median 30 is step 10
  const KernelProfile median = kineto_profile_from_json(JsonNode(doc, "p.json"));
  CHECK(median.device_name == "NVIDIA A100-SXM4-40GB");
  CHECK(median.steps == 5);
  CHECK(median.step_used == 10);
  CHECK(median.median_step);
  REQUIRE(median.kernels.size() == 1);
  CHECK(median.kernels[0].duration_s == doctest::Approx(30e-6));
  CHECK(median.kernels_in_other_steps == 4);
  KinetoOptions third;
  third.step = 12;
  const KernelProfile chosen = kineto_profile_from_json(JsonNode(doc, "p.json"), third);
  REQUIRE(chosen.kernels.size() == 1);
  CHECK(chosen.kernels[0].duration_s == doctest::Approx(50e-6));
  CHECK_FALSE(chosen.median_step);
  // Four steps: the lower median (10, 20, 30, 40 -> 20, step 11).
  CHECK(kineto_profile_from_json(JsonNode(stepped_profile({10, 20, 30, 40}), "p.json")).step_used == 11);
  KinetoOptions missing;
  missing.step = 3;
  try {
    kineto_profile_from_json(JsonNode(doc, "p.json"), missing);
    FAIL("not refused");
  } catch (const InputError& e) {
    CHECK(std::string(e.what()).find("no ProfilerStep#3 in the profile (it marks steps 10 to 14)") != std::string::npos);
  }
}

TEST_CASE("a profile's host matrix multiplies must be the model's: the first that is not is refused at its Input Dims") {
  // The toy (hidden 256, micro-batch 2 x sequence 256 = 512 tokens): its QKV GEMM is 512 x 256 by 256 x 768.
  const Trace trace = generate_trace(tiny_gpt(), tiny_training());
  auto op = [](const std::string& name, const Json& dims) {
    return Json{{"ph", "X"}, {"cat", "cpu_op"}, {"name", name}, {"ts", 1.0}, {"dur", 1.0}, {"args", {{"Input Dims", dims}}}};
  };
  const Json qkv_addmm = op("aten::addmm", Json::parse("[[768], [512, 256], [256, 768], [], []]"));
  const Json qkv_linear = op("aten::linear", Json::parse("[[2, 256, 256], [768, 256], [768]]"));
  const Json wgrad_mm = op("aten::mm", Json::parse("[[768, 512], [512, 256]]"));  // the weight gradient, transposed
  const Json other_model = op("aten::mm", Json::parse("[[512, 7168], [7168, 256]]"));
  const Json no_dims = {{"ph", "X"}, {"cat", "cpu_op"}, {"name", "aten::mm"}, {"ts", 1.0}, {"dur", 1.0}};
  auto profile_of = [](std::vector<Json> events) {
    return kineto_profile_from_json(JsonNode(Json{{"traceEvents", events}}, "p.json"));
  };
  const KernelProfile fits = profile_of({qkv_addmm, qkv_linear, wgrad_mm, no_dims});
  CHECK(fits.gemm_ops.size() == 3);
  CHECK_NOTHROW(check_gemm_shapes(trace, fits));
  try {
    check_gemm_shapes(trace, profile_of({qkv_addmm, other_model}));
    FAIL("not refused");
  } catch (const InputError& e) {
    const std::string what = e.what();
    CHECK(what.find("p.json: at $.traceEvents[1].args.Input Dims: the profile's aten::mm multiplies 512 x 7168 by 7168 x 256") !=
          std::string::npos);
    CHECK(what.find("no matrix multiply of tiny-gpt at micro-batch 2 and sequence 256") != std::string::npos);
  }
}

TEST_CASE("a profile that times none of the trace's kernels (CPU only, or only NCCL and copies) is refused, with its counts") {
  Trace trace = generate_trace(tiny_gpt(), tiny_training());
  auto kernel = [](const std::string& name, int stream) {
    return Json{{"ph", "X"}, {"cat", "kernel"}, {"name", name}, {"ts", 1.0}, {"dur", 3.0}, {"args", {{"device", 0}, {"stream", stream}}}};
  };
  const Json cpu_only = {{"traceEvents", Json::array({{{"ph", "X"}, {"cat", "cpu_op"}, {"name", "aten::mm"}, {"ts", 1.0}, {"dur", 1.0}}})}};
  const Json comm_only = {{"traceEvents", Json::array({kernel("ncclDevKernel_AllReduce_Sum_f16_RING_LL", 7), kernel("Memcpy DtoD", 8)})}};
  CHECK_THROWS_WITH_AS(apply_kernel_times(trace, kineto_profile_from_json(JsonNode(cpu_only, "cpu.json"))),
                       doctest::Contains("cpu.json: times none of the trace's kernels: it holds 0 GPU kernels"), InputError);
  const KernelProfile comm = kineto_profile_from_json(JsonNode(comm_only, "comm.json"));
  std::string what;
  try {
    apply_kernel_times(trace, comm);
  } catch (const InputError& e) {
    what = e.what();
  }
  CHECK(what.find("comm.json: times none of the trace's kernels: it holds 2 GPU kernels in the step used, of which 1 "
                  "communication, 0 optimizer and 1 memcpy/memset are left out") != std::string::npos);
}
