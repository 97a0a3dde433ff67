#pragma once
// A SimGrid engine for one simulation: quiet, its network model configured for RDMA fabrics
// (topologies::configure_engine_for_rdma says which model and why; the all-reduce calibration
// test holds it to the alpha-beta closed form).  SimGrid allows one engine per process, so every
// simulation runs in its own process (see isolated_run.hpp).
#include <memory>

#include <simgrid/s4u/Engine.hpp>
#include <xbt/log.h>

#include "topologies/lowering.hpp"

namespace luwu::sim {

inline std::unique_ptr<simgrid::s4u::Engine> make_engine(bool verbose = false) {
  int argc = 1;
  static char name[] = "luwusim";
  char* argv[] = {name, nullptr};
  if (!verbose) xbt_log_control_set("root.thresh:critical");
  auto engine = std::make_unique<simgrid::s4u::Engine>(&argc, argv);
  topologies::configure_engine_for_rdma(*engine);
  return engine;
}

}  // namespace luwu::sim
