#include "sim/experiment/stage_fit.hpp"

#include <fmt/format.h>

namespace luwu::sim {

std::string StageFit::problem() const {
  if (fit().runs()) return "";
  return stages.size() > 1 ? fmt::format("pipeline stage {}: {}", worst, fit().problem) : fit().problem;
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
