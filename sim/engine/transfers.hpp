#pragma once
// Point-to-point data movement that is not a collective: a PCIe copy between a GPU and its host, a
// NIC's DMA, a switch's multicast leg; and striped SSD reads and writes.  Every byte is counted.
#include <string>
#include <vector>

#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Disk.hpp>
#include <simgrid/s4u/Host.hpp>

#include "sim/engine/traffic_meter.hpp"

namespace luwu::sim {

// Starts a flow of `bytes` from one host to another (any actor may start it).  rate_Bps > 0 caps
// its rate (e.g. a self-clocked window), and then the calling actor must run on `from`; otherwise
// the flow takes its max-min share of the route.
simgrid::s4u::CommPtr start_transfer(simgrid::s4u::Host* from, simgrid::s4u::Host* to, double bytes,
                                     TrafficMeter& traffic, double rate_Bps = -1);
// Blocking; a flow without a rate cap is split into the routing's sub-flows (sub_flows_between),
// each with an equal share of the bytes, and returns when all are done.  (start_transfer returns
// one comm and so never splits: spraying and flow splitting leave its flows on one route.)
void transfer(simgrid::s4u::Host* from, simgrid::s4u::Host* to, double bytes, TrafficMeter& traffic,
              double rate_Bps = -1);

// How many sub-flows the routing splits a flow between these hosts into (simulation.routing
// "spray": one per minimum-hop route; "ecmp" with simulation.flow_splitting k: k); 1 for most.
std::size_t sub_flows_between(const simgrid::s4u::Host* from, const simgrid::s4u::Host* to);
// Starts sub-flow `variant` (> 0) of a split flow: a host-to-host flow of `bytes` on that route
// variant of the pair, counted on its own route.  (Sub-flow 0 is an ordinary flow.)
simgrid::s4u::CommPtr start_sub_flow(simgrid::s4u::Host* from, simgrid::s4u::Host* to, double bytes,
                                     TrafficMeter& traffic, unsigned variant);

// Reads or writes `bytes` striped evenly over the disks (RAID-0 style), all at once; returns when
// every disk is done.  Counted as "<disk>:read" / "<disk>:write".  rate_cap_Bps > 0: the stream
// takes at least bytes / rate_cap_Bps (a queue of few requests in flight, models/storage.hpp's
// Little's law, leaves the disks idle part of the time rather than slower: SimGrid's Io has no
// rate of its own, so the caller waits out the rest after its I/O).
void read_striped(const std::vector<simgrid::s4u::Disk*>& disks, double bytes, TrafficMeter& traffic,
                  double rate_cap_Bps = -1);
void write_striped(const std::vector<simgrid::s4u::Disk*>& disks, double bytes, TrafficMeter& traffic,
                   double rate_cap_Bps = -1);

// Runs `seconds` of work on a host's processor (CPU optimizer steps, DRAM-bound kernels): the
// calling actor executes on `host`, sharing its speed with whatever else runs there.
void execute_on(simgrid::s4u::Host* host, double seconds);

}  // namespace luwu::sim
