#pragma once
// Whether a system runs under a tensor x pipeline x data layout, as `run` and `memory` judge it:
// each stage's GPUs hold that stage's share of the model, partitioned (by the systems that
// partition) over its data-parallel group, and its optimizer node holds its share of what the node
// serves (stage_hardware); the stage that fits worst decides.
#include <cstddef>
#include <string>
#include <vector>

#include "sim/experiment/simulate.hpp"

namespace luwu::sim {

struct StageFit {
  std::vector<Fit> stages;  // each stage's
  std::size_t worst = 0;    // the stage that fits worst: it decides
  const Fit& fit() const { return stages[worst]; }
  // Why it does not run, naming the stage past one and the other stages that do not run either:
  // "pipeline stage 3: ... (pipeline stages 5, 7 do not run either)"; "" when it runs.
  std::string problem() const;
};

StageFit worst_stage_fit(const ParallelWorkload& workload, const Hardware& hardware, std::size_t optimizer_nodes,
                         const System& system);

}  // namespace luwu::sim
