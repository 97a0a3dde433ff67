#pragma once
// What the schedules' closed-form tests share: synthetic traces that isolate compute,
// communication or overlap; the latency and bottleneck of graph routes; hardware without
// interference; the optimizer and compute times the schedules should add up to.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "models/host.hpp"
#include "models/optimizer_cost.hpp"
#include "sim/engine/hardware.hpp"
#include "sim/experiment/result.hpp"
#include "sim/systems/registry.hpp"
#include "topologies/builders.hpp"
#include "topologies/routes.hpp"
#include "workloads/model_catalog.hpp"
#include "workloads/trace.hpp"

namespace sim_test {

using namespace luwu;

// L transformer layers of `params` parameters each, fp16, `grad_accum` micro-batches; every op `flops`.
inline workloads::Trace synthetic_trace(int layers, std::uint64_t params, double flops, int grad_accum = 1) {
  using workloads::OpKind;
  workloads::Trace t;
  t.model = *workloads::find_catalog_model("gpt3-1.3b");
  t.training.micro_batch = 1;
  t.training.seq_len = 2048;
  t.training.grad_accum = grad_accum;
  for (int l = 0; l < layers; ++l) {
    workloads::LayerInfo info;
    info.name = "block_" + std::to_string(l);
    info.params = info.params_used = params;
    info.forward_flops = info.backward_flops = flops;
    t.layers.push_back(info);
  }
  // Each op is one GEMM kernel of a transformer block's shape, tokens (1 x 2048) x hidden by hidden x hidden.
  workloads::Kernel block;
  block.name = "block";
  block.flops = flops;
  block.gemm = {2048, t.model.hidden, t.model.hidden};
  block.output_elements = 2048.0 * t.model.hidden;
  t.kernel_lists = {{block}};
  for (int m = 0; m < grad_accum; ++m) {
    for (int l = 0; l < layers; ++l) t.ops.push_back({OpKind::Forward, l, m, flops, 2 * params, 0, 0, 0, 0});
    for (int l = layers - 1; l >= 0; --l)
      t.ops.push_back({OpKind::Backward, l, m, flops, 2 * params, 2 * params, 0, 0, 0});
  }
  return t;
}

struct Path {
  double latency_s = 0;
  double bandwidth_Bps = std::numeric_limits<double>::infinity();
  // A flow alone on the path (CM02, no window bound): latency + bytes / bottleneck, or / a rate cap.
  double time_s(double bytes, double rate_cap_Bps = std::numeric_limits<double>::infinity()) const {
    return latency_s + bytes / std::min(bandwidth_Bps, rate_cap_Bps);
  }
};

// Latency and bottleneck bandwidth of the graph route between two vertices.
inline Path path(const topologies::Topology& topo, topologies::Vertex a, topologies::Vertex b) {
  Path p;
  for (auto e : topologies::shortest_route(topo, a, b)) {
    p.latency_s += topo[e].latency_s;
    p.bandwidth_Bps = std::min(p.bandwidth_Bps, topo[e].bandwidth_Bps);
  }
  return p;
}
inline Path gpu_to_gpu(const topologies::Topology& topo, int a, int b) {
  return path(topo, topo.gpus()[a], topo.gpus()[b]);
}
inline Path gpu_to_cpu(const topologies::Topology& topo, int rank) {
  auto gpu = topo.gpus()[rank];
  return path(topo, gpu, topo.cpu_of(gpu));
}
inline Path gpu_to_switch(const topologies::Topology& topo, int rank) {
  return path(topo, topo.gpus()[rank], *topo.find_vertex("switch"));
}

// Single-GPU workers on a Tofino (luwu-star), in `racks` top-of-rack switches when more than one.
inline topologies::Topology star(int workers, int racks = 1) {
  topologies::LuwuStarParams p;
  p.workers = workers;
  p.racks = racks;
  return topologies::build_luwu_star(p);
}

// Bytes a result counted on one directed link ("<from>--<to>_UP" runs from..to), 0 if none.
inline double link_bytes(const sim::SystemResult& r, const std::string& name) {
  for (const auto& l : r.links)
    if (l.link == name) return l.bytes;
  return 0;
}

inline sim::Hardware quiet_hardware(const topologies::Topology& topo) {
  auto hw = sim::hardware_of(topo);
  hw.gpu.collective_interference = 0;  // closed forms without interference
  hw.gpu.dma_interference = 0;
  hw.gpu.collective_sm_share = 0;       // nor launch blocking
  hw.gpu.collective_bandwidth_drop = 0;
  return hw;
}

inline double gpu_optimizer_s(const sim::Hardware& hw, double params) {
  return models::optimizer_update_time_s(params, models::adam_mixed_precision_cost(), hw.gpu.achieved_hbm_Bps(),
                                         hw.gpu.achieved_hbm_Bps(), hw.gpu.peak_fp32_flops);
}

// DeepSpeed's CPU Adam (ZeRO-Offload, ZeRO-Infinity): the gradient is widened to fp32 on the GPU,
// so the kernel reads 4 B of it (models/optimizer_cost.hpp).
inline models::OptimizerCost deepspeed_adam_cost() {
  models::OptimizerPrecision precision;
  precision.grad_conversion = models::GradientConversion::on_gpu;
  return models::adam_mixed_precision_cost(precision);
}

// DeepSpeed 0.9.3's offloaded step per parameter of an fp16 model (the synthetic traces'), at
// stage 3 (ZeRO-Infinity) and at stages 1 and 2 (ZeRO-Offload) alike: CPU Adam's bytes, plus the
// in-place unscale of the fp32 gradient (unscale_and_clip_grads: 4 B read, 4 B written; stages 1
// and 2 skip it in bf16) and the 16-bit copy made in a pass of its own, which reads the fp32 master
// again (4 B).
inline models::OptimizerCost deepspeed_offloaded_step_cost() {
  auto c = deepspeed_adam_cost();
  c.bytes_read_per_param += 4 + 4;
  c.bytes_written_per_param += 4;
  return c;
}

// DeepSpeed's offloaded optimizer step on the CPU over `params` of an fp16 model whose state is all
// in the worker server's DRAM.
inline double cpu_optimizer_s(const sim::Hardware& hw, double params) {
  return models::cpu_optimizer_step_times(hw.worker_host, params, deepspeed_offloaded_step_cost(), {1, 0, 0}).total_s;
}

// The kernels' undisturbed time, with the shape synthetic_trace gives its ops (a transformer
// block's at 2048 tokens).
// A GEMM kernel of `flops` with shape (m, n, k): the shape's time (models/gpu.hpp) for its FLOPs.
inline double gemm_s(const models::GpuSpec& g, double flops, double m, double n, double k) {
  return g.gemm_time_s(m, n, k, models::Precision::Fp16) * flops / (2 * m * n * k);
}

inline double compute_s(const workloads::Trace& t, const sim::Hardware& hw) {
  double sum = 0;
  for (const auto& op : t.ops) sum += gemm_s(hw.gpu, op.flops, 2048.0, t.model.hidden, t.model.hidden);
  return sum;
}

// GPT-3 125M from the catalog at micro-batch 1, 256 tokens, recompute on: a real model's
// sub-modules, small enough to simulate in a test.
inline workloads::Trace gpt3_125m_trace() {
  workloads::TrainingConfig t;
  t.micro_batch = 1;
  t.seq_len = 256;
  t.recompute = true;
  return workloads::generate_trace(*workloads::find_catalog_model("gpt3-125m"), t);
}

// The spans on one track of a component's timeline (a Chrome trace), in order.
struct TrackSpan {
  std::string name;
  std::string category;
  double start_s;
  double end_s;
};
inline std::vector<TrackSpan> track_spans(const luwu::Json& trace, const std::string& component, const std::string& track) {
  int pid = -1, tid = -1;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "process_name" && e["args"]["name"] == component) pid = e["pid"];
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "M" && e["name"] == "thread_name" && e["pid"] == pid && e["args"]["name"] == track) tid = e["tid"];
  std::vector<TrackSpan> out;
  for (const auto& e : trace["traceEvents"])
    if (e["ph"] == "X" && e["pid"] == pid && e["tid"] == tid) {
      const double start = e["ts"].get<double>() * 1e-6;
      out.push_back({e["name"].get<std::string>(), e.value("cat", ""), start, start + e["dur"].get<double>() * 1e-6});
    }
  return out;
}

// Durations (s) of the spans on one track of a component's timeline, in order.
inline std::vector<double> span_durations(const luwu::Json& trace, const std::string& component, const std::string& track) {
  std::vector<double> out;
  for (const auto& s : track_spans(trace, component, track)) out.push_back(s.end_s - s.start_s);
  return out;
}

// A system as a scenario would name it, with these settings on top of its defaults.
inline sim::SystemPtr make_system(const std::string& name, luwu::Json settings = luwu::Json::object()) {
  settings["name"] = name;
  return sim::system_from_json(luwu::JsonNode(settings, "test", "$.systems[0]"));
}

// The message a system's bad settings give ("" when they parse).
inline std::string system_settings_error(const std::string& name, luwu::Json settings) {
  try {
    make_system(name, std::move(settings));
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}

}  // namespace sim_test
