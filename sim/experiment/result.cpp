#include "sim/experiment/result.hpp"

#include <algorithm>
#include <limits>

namespace luwu::sim {

SpineSummary summarize_spines(const std::vector<SpineUse>& spines) {
  SpineSummary s;
  s.count = static_cast<int>(spines.size());
  if (spines.empty()) return s;
  s.bytes_min = s.utilization_min = std::numeric_limits<double>::infinity();
  for (const auto& u : spines) {
    s.bytes_max = std::max(s.bytes_max, u.bytes);
    s.bytes_min = std::min(s.bytes_min, u.bytes);
    s.bytes_mean += u.bytes / s.count;
    s.utilization_max = std::max(s.utilization_max, u.busiest_link_utilization);
    s.utilization_min = std::min(s.utilization_min, u.busiest_link_utilization);
    s.utilization_mean += u.busiest_link_utilization / s.count;
  }
  if (s.bytes_mean > 0) s.imbalance = s.bytes_max / s.bytes_mean;
  return s;
}

// Summary fields flat (they become CSV columns), the switches as columns of equal length
// (pandas.DataFrame(j["per_switch"]) reads them).
luwu::Json spines_to_json(const std::vector<SpineUse>& spines) {
  const SpineSummary s = summarize_spines(spines);
  luwu::Json names = luwu::Json::array(), bytes = luwu::Json::array(), utilization = luwu::Json::array();
  for (const auto& u : spines) {
    names.push_back(u.name);
    bytes.push_back(u.bytes);
    utilization.push_back(u.busiest_link_utilization);
  }
  return {{"count", s.count},
          {"bytes_max", s.bytes_max},
          {"bytes_mean", s.bytes_mean},
          {"bytes_min", s.bytes_min},
          {"utilization_max", s.utilization_max},
          {"utilization_mean", s.utilization_mean},
          {"utilization_min", s.utilization_min},
          {"imbalance", s.imbalance ? luwu::Json(*s.imbalance) : luwu::Json()},
          {"per_switch", {{"switch", names}, {"bytes", bytes}, {"busiest_link_utilization", utilization}}}};
}

const std::vector<std::string>& spine_summary_keys() {
  static const std::vector<std::string> keys = {"count",           "bytes_max",        "bytes_mean",
                                                "bytes_min",       "utilization_max",  "utilization_mean",
                                                "utilization_min", "imbalance"};
  return keys;
}

namespace {

std::vector<SpineUse> spines_from_json(const luwu::Json& j) {
  const auto& per = j.at("per_switch");
  const auto names = per.at("switch").get<std::vector<std::string>>();
  const auto bytes = per.at("bytes").get<std::vector<double>>();
  const auto utilization = per.at("busiest_link_utilization").get<std::vector<double>>();
  std::vector<SpineUse> out;
  for (std::size_t i = 0; i < names.size(); ++i) out.push_back({names[i], bytes.at(i), utilization.at(i)});
  return out;
}

}  // namespace

luwu::Json result_to_json(const SystemResult& r, bool with_links) {
  luwu::Json j = {{"system", r.system}, {"feasible", r.feasible}, {"workers", r.workers}};
  if (!r.cost.is_null()) j["cost"] = r.cost;  // the cluster's price, whether it runs or not
  if (!r.details.is_null()) j["details"] = r.details;  // the cluster's price, whether it runs or not
  if (!r.feasible) {
    j["reason"] = r.reason;
    j["memory"] = r.memory;
    return j;
  }
  j["iteration_time_s"] = r.iteration_time_s;
  j["tokens_per_s"] = r.tokens_per_s;
  j["tflops_per_gpu"] = r.tflops_per_gpu;
  j["mfu"] = r.mfu;
  j["breakdown_s"] = {{"compute", r.breakdown.compute_s},
                      {"exposed_communication", r.breakdown.exposed_communication_s},
                      {"exposed_optimizer", r.breakdown.exposed_optimizer_s},
                      {"io_stall", r.breakdown.io_stall_s},
                      {"host_launch", r.breakdown.host_launch_s},
                      {"idle", r.breakdown.idle_s}};
  j["gpu_contention_s"] = {{"compute_stretch", r.contention.compute_stretch_s},
                           {"collective_launch_wait", r.contention.collective_launch_wait_s}};
  if (r.folding)
    j["folding"] = {{"data_parallel", r.folding->data_parallel}, {"simulated_data_parallel", r.folding->simulated}};
  if (r.model_parallel)
  {
    j["model_parallel_s"] = {{"tensor_collectives", r.model_parallel->tensor_collectives_s},
                             {"pipeline_waits", r.model_parallel->pipeline_waits_s}};
    if (r.model_parallel->expert_all_to_all_s > 0)
      j["model_parallel_s"]["expert_all_to_all"] = r.model_parallel->expert_all_to_all_s;
  }
  j["network_bytes_per_worker"] = {{"sent", r.sent_bytes_per_worker}, {"received", r.received_bytes_per_worker}};
  j["gpu_peak_memory_bytes"] = r.gpu_peak_memory_bytes;
  j["memory"] = r.memory;
  j["storage_bytes"] = r.storage_bytes;
  j["simulation"] = {{"flows", r.simulated_flows}, {"kernels", r.simulated_kernels}};
  if (!r.spines.empty()) j["spines"] = spines_to_json(r.spines);
  if (with_links) {
    luwu::Json links = luwu::Json::array();
    for (const auto& l : r.links)
      links.push_back({{"link", l.link}, {"bytes", l.bytes}, {"bandwidth_Bps", l.bandwidth_Bps},
                       {"utilization", l.utilization}});
    j["links"] = links;
  }
  return j;
}

SystemResult result_from_json(const luwu::Json& j) {
  SystemResult r;
  r.system = j.at("system").get<std::string>();
  r.feasible = j.at("feasible").get<bool>();
  r.workers = j.at("workers").get<int>();
  r.memory = j.value("memory", luwu::Json::object());
  if (j.contains("cost")) r.cost = j.at("cost");
  if (j.contains("details")) r.details = j.at("details");
  if (!r.feasible) {
    r.reason = j.at("reason").get<std::string>();
    return r;
  }
  r.iteration_time_s = j.at("iteration_time_s").get<double>();
  r.tokens_per_s = j.at("tokens_per_s").get<double>();
  r.tflops_per_gpu = j.at("tflops_per_gpu").get<double>();
  r.mfu = j.at("mfu").get<double>();
  const auto& b = j.at("breakdown_s");
  r.breakdown.compute_s = b.at("compute").get<double>();
  r.breakdown.exposed_communication_s = b.at("exposed_communication").get<double>();
  r.breakdown.exposed_optimizer_s = b.at("exposed_optimizer").get<double>();
  r.breakdown.io_stall_s = b.at("io_stall").get<double>();
  r.breakdown.host_launch_s = b.value("host_launch", 0.0);  // results written before it was reported have none
  r.breakdown.idle_s = b.at("idle").get<double>();
  if (j.contains("gpu_contention_s")) {  // results written before it was reported have none
    const auto& c = j.at("gpu_contention_s");
    r.contention = {c.at("compute_stretch").get<double>(), c.at("collective_launch_wait").get<double>()};
  }
  if (j.contains("folding"))
    r.folding = Folding{j.at("folding").at("data_parallel").get<int>(),
                        j.at("folding").at("simulated_data_parallel").get<int>()};
  if (j.contains("model_parallel_s"))
    r.model_parallel = ModelParallelTimes{j.at("model_parallel_s").at("tensor_collectives").get<double>(),
                                          j.at("model_parallel_s").at("pipeline_waits").get<double>(),
                                          j.at("model_parallel_s").value("expert_all_to_all", 0.0)};
  r.sent_bytes_per_worker = j.at("network_bytes_per_worker").at("sent").get<double>();
  r.received_bytes_per_worker = j.at("network_bytes_per_worker").at("received").get<double>();
  r.gpu_peak_memory_bytes = j.at("gpu_peak_memory_bytes").get<std::vector<double>>();
  r.storage_bytes = j.at("storage_bytes").get<std::map<std::string, double>>();
  r.simulated_flows = j.at("simulation").at("flows").get<std::uint64_t>();
  r.simulated_kernels = j.at("simulation").at("kernels").get<std::uint64_t>();
  if (j.contains("links"))
    for (const auto& l : j.at("links"))
      r.links.push_back({l.at("link").get<std::string>(), l.at("bytes").get<double>(),
                         l.at("bandwidth_Bps").get<double>(), l.at("utilization").get<double>()});
  if (j.contains("spines")) r.spines = spines_from_json(j.at("spines"));
  if (j.contains("timeline")) r.timeline = j.at("timeline");
  return r;
}

}  // namespace luwu::sim
