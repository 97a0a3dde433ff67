#pragma once
// A rate that several activities share and that is not a network link or a disk: the bandwidth
// of a GPU's collective kernel (GpuDevice::collective_engine), a host's memory bus (MemoryBus).
// It is a SimGrid host that only executes, in its own zone, whose speed is the rate in bytes/s:
// an activity that moves b bytes through it also executes b "flops" there, in parallel with its
// own transfer, and ends when both are done.  Concurrent activities share the rate (max-min), and
// changing the host's pstate changes the rate of everything running on it.
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Exec.hpp>
#include <simgrid/s4u/Host.hpp>
#include <stdexcept>
#include <simgrid/s4u/NetZone.hpp>

namespace luwu::sim {

// A pacing host with one speed per pstate, in bytes/s (pstate 0 first).  A name already made is
// the same resource (one machine's memory bus, paced for every schedule that uses the machine: the
// data-parallel groups of a model-parallel layout share the optimizer node).
inline simgrid::s4u::Host* make_pacing_host(const std::string& name, std::vector<double> speeds_Bps) {
  auto* engine = simgrid::s4u::Engine::get_instance();
  if (auto* made = engine->host_by_name_or_null(name)) {
    if (made->get_pstate_count() != speeds_Bps.size() || made->get_speed() != speeds_Bps.front())
      throw std::logic_error("pacing host " + name + " made twice with different speeds");
    return made;
  }
  auto* zone = engine->netzone_by_name_or_null("luwusim-pacing-hosts");
  if (zone == nullptr) {
    zone = simgrid::s4u::create_empty_zone("luwusim-pacing-hosts");
    zone->set_parent(engine->get_netzone_root());
  }
  auto* host = zone->create_host(name, std::move(speeds_Bps));
  host->seal();
  return host;
}

// Starts moving `bytes` through the pacing host (nullptr: nothing paces, or nothing to move).
inline simgrid::s4u::ExecPtr start_paced(simgrid::s4u::Host* pacing, double bytes) {
  if (pacing == nullptr || bytes <= 0) return nullptr;
  auto exec = simgrid::s4u::Exec::init();
  exec->set_flops_amount(bytes);
  exec->set_host(pacing);
  exec->start();
  return exec;
}

inline void wait_paced(const simgrid::s4u::ExecPtr& exec) {
  if (exec) exec->wait();
}

// Runs `activity` while `bytes` move through the pacing host; returns when both are done.
template <class Activity>
void paced(simgrid::s4u::Host* pacing, double bytes, Activity&& activity) {
  auto exec = start_paced(pacing, bytes);
  activity();
  wait_paced(exec);
}

}  // namespace luwu::sim
