// LuWu's optimizer node: per-step work, requirements and threads; the formulas are in the header.
#include "models/optimizer_node.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace luwu::models {

std::string to_string(NodeStep step) {
  switch (step) {
    case NodeStep::ReadParam: return "read parameter (ssd)";
    case NodeStep::PushParam: return "push parameter (nic)";
    case NodeStep::PullGradient: return "pull gradient (nic)";
    case NodeStep::ReadState: return "read state (ssd)";
    case NodeStep::Update: return "update (cpu)";
    case NodeStep::WriteBack: return "write back (ssd)";
  }
  return "?";
}

std::vector<NodeStepWork> forward_steps(const NodeSizes& s) {
  return {{NodeStep::ReadParam, s.param_bytes, 0, 0, s.param_bytes, 0},
          {NodeStep::PushParam, 0, 0, s.param_bytes, 0, 0}};
}

std::vector<NodeStepWork> backward_steps(const NodeSizes& s) {
  const double state = s.update.state_bytes_per_param;
  const double written = s.update.bytes_written_per_param;  // state + the low-precision parameter copy
  auto steps = forward_steps(s);
  steps.push_back({NodeStep::PullGradient, 0, 0, 0, s.grad_bytes, 0});
  steps.push_back({NodeStep::ReadState, state, 0, 0, state, 0});
  steps.push_back({NodeStep::Update, 0, 0, s.update.bytes_read_per_param, written, s.update.flops_per_param});
  steps.push_back({NodeStep::WriteBack, 0, written, written, 0, 0});
  return steps;
}

NodeStepWork total(const std::vector<NodeStepWork>& steps) {
  NodeStepWork sum{NodeStep::Update};
  for (const auto& w : steps) {
    sum.ssd_read_bytes += w.ssd_read_bytes;
    sum.ssd_write_bytes += w.ssd_write_bytes;
    sum.dram_read_bytes += w.dram_read_bytes;
    sum.dram_write_bytes += w.dram_write_bytes;
    sum.flops += w.flops;
  }
  return sum;
}

namespace {
NodePhaseRequirement phase(const std::vector<NodeStepWork>& steps, double params_per_s) {
  const NodeStepWork t = total(steps);
  return {t.ssd_read_bytes * params_per_s, t.ssd_write_bytes * params_per_s,
          (t.dram_read_bytes + t.dram_write_bytes) * params_per_s, t.flops * params_per_s};
}
}  // namespace

NodeRequirements node_requirements(const NodeSizes& sizes, double gradient_Bps) {
  if (!(gradient_Bps > 0 && sizes.grad_bytes > 0)) throw std::invalid_argument("gradient rate and size must be positive");
  NodeRequirements r;
  r.params_per_s = gradient_Bps / sizes.grad_bytes;
  r.forward = phase(forward_steps(sizes), r.params_per_s);
  r.backward = phase(backward_steps(sizes), r.params_per_s);
  return r;
}

double NodeThreadRates::params_per_s(const NodeStepWork& work) const {
  if (work.step == NodeStep::Update) return adam_params_per_s;
  return io_Bps / work.io_bytes();
}

bool has_node_thread_rates(const Profile& host) {
  return host.has("adam_thread_update_rate") && host.has("io_thread_bandwidth");
}

NodeThreadRates node_thread_rates_from_profile(const Profile& host) {
  require_kind(host, {"host"});
  for (const char* field : {"adam_thread_update_rate", "io_thread_bandwidth"})
    if (!host.has(field))
      throw InputError(host.file, host.json_path + ".fields." + field,
                       "host \"" + host.name + "\" has no \"" + field +
                           "\": the optimizer node's per-thread rates are needed to size or share its threads");
  return {host.get("adam_thread_update_rate"), host.get("io_thread_bandwidth")};
}

std::vector<int> step_threads(const NodeSizes& sizes, const NodeThreadRates& rates, double gradient_Bps) {
  const double params_per_s = node_requirements(sizes, gradient_Bps).params_per_s;
  std::vector<int> threads;
  for (const auto& w : backward_steps(sizes))
    threads.push_back(static_cast<int>(std::ceil(params_per_s / rates.params_per_s(w))));
  return threads;
}

namespace {
double device_bound(const std::vector<double>& device_params_per_s, std::size_t step) {
  const double d = step < device_params_per_s.size() ? device_params_per_s[step] : 0;
  return d > 0 ? d : std::numeric_limits<double>::infinity();
}
}  // namespace

double step_centric_params_per_s(const NodeSizes& sizes, const NodeThreadRates& rates, const std::vector<int>& threads,
                                 const std::vector<double>& device_params_per_s) {
  const auto steps = backward_steps(sizes);
  if (threads.size() != steps.size()) throw std::invalid_argument("step-centric pipelining needs a thread count per step");
  double rate = std::numeric_limits<double>::infinity();
  for (std::size_t s = 0; s < steps.size(); ++s) {
    if (threads[s] < 1) throw std::invalid_argument("every step needs at least one thread");
    rate = std::min({rate, threads[s] * rates.params_per_s(steps[s]), device_bound(device_params_per_s, s)});
  }
  return rate;
}

LayerCentricRate layer_centric_params_per_s(const NodeSizes& sizes, const NodeThreadRates& rates, int total_threads,
                                            int threads_per_layer, const std::vector<double>& device_params_per_s) {
  if (threads_per_layer < 1 || total_threads < threads_per_layer)
    throw std::invalid_argument("layer-centric pipelining needs 1 <= threads per layer <= total threads");
  LayerCentricRate r;
  r.layers_in_flight = total_threads / threads_per_layer;
  double seconds_per_param = 0;  // one layer's, its steps one after another
  double devices = std::numeric_limits<double>::infinity();
  const auto steps = backward_steps(sizes);
  for (std::size_t s = 0; s < steps.size(); ++s) {
    const double device = device_bound(device_params_per_s, s);
    seconds_per_param += 1 / std::min(threads_per_layer * rates.params_per_s(steps[s]), device);
    devices = std::min(devices, device);
  }
  r.params_per_s = std::min(r.layers_in_flight / seconds_per_param, devices);
  return r;
}

}  // namespace luwu::models
