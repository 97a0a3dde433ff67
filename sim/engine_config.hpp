#pragma once
// How the SimGrid engine is configured for the fabrics luwusim simulates (RDMA, NVLink, PCIe).
//
// SimGrid's default network model (LV08) is calibrated for TCP: it scales bandwidth by ~0.97 and
// latency by ~13, models TCP acks as cross traffic, and bounds each flow by a TCP window
// (TCP-gamma / 2 x latency).  None of that is what RDMA or a PCIe/NVLink DMA does, so luwusim uses
// the plain flow-level model CM02 (max-min bandwidth sharing, time = latency + bytes / share),
// without cross traffic and with a window too large to bind.  (Not TCP-gamma 0: CM02 bounds a flow
// by min(its rate cap, TCP-gamma / (2 x latency)), and a bound of 0 means none, so gamma 0 also
// drops every explicit rate cap, such as a self-clocked aggregation window; measured on 3.32.)
// With this, a flow alone on a path takes exactly latency + bytes / bottleneck bandwidth (or / its
// rate cap); see ../shared/reference/simgrid-notes.md and the all-reduce calibration test.  Link bandwidths are already goodputs (models/ removes
// encoding and header overheads), so no further factor applies.
#include <memory>

#include <simgrid/s4u/Engine.hpp>
#include <xbt/log.h>

namespace luwu::sim {

inline void configure_engine_for_rdma() {
  simgrid::s4u::Engine::set_config("network/model:CM02");
  simgrid::s4u::Engine::set_config("network/crosstraffic:0");
  simgrid::s4u::Engine::set_config("network/TCP-gamma:1e100");  // bytes: 5e108 B/s even at 1 ns latency
  // Measured here: without these, CM02 still scales bandwidth by the default factor (a 1 MB flow
  // on a 12.5 GB/s link took 106 us instead of 80 us).
  simgrid::s4u::Engine::set_config("network/bandwidth-factor:1.0");
  simgrid::s4u::Engine::set_config("network/latency-factor:1.0");
  simgrid::s4u::Engine::set_config("host/model:default");
}

// A SimGrid engine for one simulation, quiet unless asked.  SimGrid allows one engine per process,
// so every simulation runs in its own process (see isolated_run.hpp).
inline std::unique_ptr<simgrid::s4u::Engine> make_engine(bool verbose = false) {
  int argc = 1;
  static char name[] = "luwusim";
  char* argv[] = {name, nullptr};
  if (!verbose) xbt_log_control_set("root.thresh:critical");
  auto engine = std::make_unique<simgrid::s4u::Engine>(&argc, argv);
  configure_engine_for_rdma();
  return engine;
}

}  // namespace luwu::sim
