#include "sim/transfers.hpp"

#include <cmath>
#include <cstdint>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Exec.hpp>
#include <simgrid/s4u/Io.hpp>

namespace luwu::sim {
namespace {

std::uint64_t whole_bytes(double bytes) { return static_cast<std::uint64_t>(std::ceil(bytes)); }

void striped(const std::vector<simgrid::s4u::Disk*>& disks, double bytes, TrafficMeter& traffic,
             simgrid::s4u::Io::OpType op) {
  if (bytes <= 0 || disks.empty()) return;
  const double share = bytes / static_cast<double>(disks.size());
  std::vector<simgrid::s4u::IoPtr> ios;
  for (auto* d : disks) {
    ios.push_back(d->io_init(whole_bytes(share), op)->start());
    traffic.record_resource(d->get_name() + (op == simgrid::s4u::Io::OpType::READ ? ":read" : ":write"), share);
  }
  for (auto& io : ios) io->wait();
}

}  // namespace

simgrid::s4u::CommPtr start_transfer(simgrid::s4u::Host* from, simgrid::s4u::Host* to, double bytes,
                                     TrafficMeter& traffic, double rate_Bps) {
  traffic.record_flow(from, to, bytes);
  // A host-to-host comm starts by itself once both ends are set (SimGrid 3.32), so the rate and
  // size come first.
  auto comm = simgrid::s4u::Comm::sendto_init();
  if (rate_Bps > 0) comm->set_rate(rate_Bps);
  comm->set_payload_size(whole_bytes(bytes));
  comm->set_source(from);
  comm->set_destination(to);
  return comm;
}

void transfer(simgrid::s4u::Host* from, simgrid::s4u::Host* to, double bytes, TrafficMeter& traffic, double rate_Bps) {
  if (bytes <= 0) return;
  start_transfer(from, to, bytes, traffic, rate_Bps)->wait();
}

void read_striped(const std::vector<simgrid::s4u::Disk*>& disks, double bytes, TrafficMeter& traffic) {
  striped(disks, bytes, traffic, simgrid::s4u::Io::OpType::READ);
}

void write_striped(const std::vector<simgrid::s4u::Disk*>& disks, double bytes, TrafficMeter& traffic) {
  striped(disks, bytes, traffic, simgrid::s4u::Io::OpType::WRITE);
}

void execute_on(simgrid::s4u::Host* host, double seconds) {
  if (seconds <= 0) return;
  auto exec = simgrid::s4u::Exec::init();
  exec->set_flops_amount(seconds * host->get_speed());
  exec->set_host(host);
  exec->start();
  exec->wait();
}

}  // namespace luwu::sim
