#include "sim/experiment/stage_fit.hpp"

#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace luwu::sim {

std::string StageFit::problem() const {
  if (fit().runs()) return "";
  if (stages.size() == 1) return fit().problem;
  // The other stages that do not run, so that mending the one named does not hide them.
  std::vector<std::size_t> others;
  for (std::size_t p = 0; p < stages.size(); ++p)
    if (p != worst && !stages[p].runs()) others.push_back(p);
  std::string message = fmt::format("pipeline stage {}: {}", worst, fit().problem);
  if (!others.empty())
    message += fmt::format(" (pipeline stage{} {} do{} not run either)", others.size() > 1 ? "s" : "",
                           fmt::join(others, ", "), others.size() > 1 ? "" : "es");
  return message;
}

StageFit worst_stage_fit(const ParallelWorkload& workload, const Hardware& hardware, std::size_t optimizer_nodes,
                         const System& system) {
  Hardware group_hardware = hardware;
  group_hardware.workers = workload.layout.data;
  const std::vector<Hardware> stage_hw = stage_hardware(workload, group_hardware, optimizer_nodes);
  StageFit out;
  for (std::size_t p = 0; p < workload.stages.size(); ++p) {
    out.stages.push_back(system.fit(*workload.stages[p], stage_hw[p]));
    const Fit& f = out.stages.back();
    const Fit& w = out.fit();
    // A stage that does not run is worse than one that does; among alike, the fuller GPU.
    if ((!f.runs() && w.runs()) || (f.runs() == w.runs() && f.footprint.gpu_total_bytes() > w.footprint.gpu_total_bytes()))
      out.worst = p;
  }
  return out;
}

}  // namespace luwu::sim
