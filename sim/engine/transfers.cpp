#include "sim/engine/transfers.hpp"

#include <cmath>
#include <cstdint>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <simgrid/s4u/Exec.hpp>
#include <simgrid/s4u/Io.hpp>
#include <simgrid/s4u/Mailbox.hpp>
#include <simgrid/s4u/Semaphore.hpp>
#include <simgrid/simix.hpp>

#include "topologies/lowering.hpp"

namespace luwu::sim {
namespace {

std::uint64_t whole_bytes(double bytes) { return static_cast<std::uint64_t>(std::ceil(bytes)); }

// The one T a host holds (a SimGrid extension, made on first use): it ends with the platform.
template <class T>
T& held_by(simgrid::s4u::Host* host) {
  static const auto extension = simgrid::s4u::Host::extension_create<T>();
  auto* held = host->extension(extension);
  if (held == nullptr) {
    held = new T(host);
    host->extension_set(extension, held);
  }
  return *held;
}

// The actors that move a host's disk I/O.  SimGrid 3.32 lists every I/O under the actor that
// creates it and never takes it off (its IoImpl::post, unlike ExecImpl's, leaves it there), and
// the list is scanned whenever an exec of that actor ends or a comm it waits for does: a stream
// that read layer after layer and also computed made a run quadratic in the layers (LuWu's node,
// 10,000 layers: 36 s, half of it in that scan).  These actors create the I/O and do nothing else,
// so their lists only grow (as every I/O's list did: nothing is kept longer than before) and are
// never scanned.  A request goes to an idle worker of the host, a new one when every worker is
// busy, and the requester waits for it; no simulated time passes in the hand-over.  Held by the
// host (a SimGrid extension), so the workers end with the platform.
class DiskIoWorkers {
 public:
  static DiskIoWorkers& of(simgrid::s4u::Host* host) { return held_by<DiskIoWorkers>(host); }

  // Runs `io` on a worker of the host and returns when it is done.
  void run(std::function<void()> io) {
    Worker* worker = nullptr;
    if (!idle_.empty()) {
      worker = idle_.back();
      idle_.pop_back();
    } else {
      workers_.push_back(std::make_unique<Worker>());
      worker = workers_.back().get();
      simgrid::s4u::Actor::create(host_->get_name() + " disk i/o " + std::to_string(workers_.size() - 1), host_,
                                  [this, worker] { serve(*worker); })
          ->daemonize();
    }
    worker->io = std::move(io);
    worker->posted->release();
    worker->done->acquire();
  }

 private:
  struct Worker {
    std::function<void()> io;
    simgrid::s4u::SemaphorePtr posted = simgrid::s4u::Semaphore::create(0);
    simgrid::s4u::SemaphorePtr done = simgrid::s4u::Semaphore::create(0);
  };

  template <class T>
  friend T& held_by(simgrid::s4u::Host* host);
  explicit DiskIoWorkers(simgrid::s4u::Host* host) : host_(host) {}

  // Actors take turns, so idle_ needs no lock.
  void serve(Worker& worker) {
    for (;;) {
      worker.posted->acquire();
      worker.io();
      worker.io = nullptr;
      idle_.push_back(&worker);
      worker.done->release();
    }
  }

  simgrid::s4u::Host* host_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<Worker*> idle_;
};

void striped(const std::vector<simgrid::s4u::Disk*>& disks, double bytes, TrafficMeter& traffic,
             simgrid::s4u::Io::OpType op, double rate_cap_Bps) {
  if (bytes <= 0 || disks.empty()) return;
  const double done_not_before = simgrid::s4u::Engine::get_clock() + (rate_cap_Bps > 0 ? bytes / rate_cap_Bps : 0);
  const double share = bytes / static_cast<double>(disks.size());
  // Counted by the requester: a span's bytes are what its own actor moved.
  for (auto* d : disks) traffic.record_disk(d, op == simgrid::s4u::Io::OpType::READ, share);
  DiskIoWorkers::of(disks.front()->get_host()).run([&] {
    std::vector<simgrid::s4u::IoPtr> ios;
    for (auto* d : disks) ios.push_back(d->io_init(whole_bytes(share), op)->start());
    for (auto& io : ios) io->wait();
    if (traffic.logs_flows())
      for (std::size_t i = 0; i < ios.size(); ++i)
        traffic.log_disk_interval(disks[i], op == simgrid::s4u::Io::OpType::READ, share, ios[i]->get_start_time(),
                                  ios[i]->get_finish_time());
  });
  const double rest = done_not_before - simgrid::s4u::Engine::get_clock();
  if (rest > 0) simgrid::s4u::this_actor::sleep_for(rest);
}


// The receiving ends of the rate-capped flows into one host.  A mailbox comm needs a receiving
// actor on its destination; making one per flow cost an actor's stack and context per flow (17,000
// in LuWu's paper scenario, a third of its time).  A host keeps its receivers instead: each takes
// the next flow posted to it, receives it, and goes back to waiting; a new one is made only when
// every receiver of the host is busy, so a host has as many as flows ever came into it at once.
// Each receiver has its own mailbox and takes the flow the moment it is posted, as a receiver
// made for the flow would.  Held by the host (a SimGrid extension), so it ends with the platform.
class CappedFlowReceivers {
 public:
  static CappedFlowReceivers& of(simgrid::s4u::Host* host) { return held_by<CappedFlowReceivers>(host); }

  // The mailbox a flow into the host is put on: an idle receiver's, or a new receiver's.
  simgrid::s4u::Mailbox* post() {
    Receiver* receiver = nullptr;
    if (!idle_.empty()) {
      receiver = idle_.back();
      idle_.pop_back();
    } else {
      receivers_.push_back(std::make_unique<Receiver>());
      receiver = receivers_.back().get();
      receiver->mailbox = simgrid::s4u::Mailbox::by_name(host_->get_name() + " capped-flow receiver " +
                                                         std::to_string(receivers_.size() - 1));
      simgrid::s4u::Actor::create(receiver->mailbox->get_name(), host_, [this, receiver] { receive(*receiver); })
          ->daemonize();
    }
    receiver->posted->release();
    return receiver->mailbox;
  }

 private:
  struct Receiver {
    simgrid::s4u::Mailbox* mailbox = nullptr;
    simgrid::s4u::SemaphorePtr posted = simgrid::s4u::Semaphore::create(0);  // released once per flow
  };

  template <class T>
  friend T& held_by(simgrid::s4u::Host* host);
  explicit CappedFlowReceivers(simgrid::s4u::Host* host) : host_(host) {}

  // Actors take turns, so idle_ needs no lock.
  void receive(Receiver& receiver) {
    for (;;) {
      receiver.posted->acquire();
      receiver.mailbox->get<int>();
      idle_.push_back(&receiver);
    }
  }

  simgrid::s4u::Host* host_;
  std::vector<std::unique_ptr<Receiver>> receivers_;
  std::vector<Receiver*> idle_;  // receivers with no flow to take, the last one to finish at the back
};

}  // namespace

simgrid::s4u::CommPtr start_transfer(simgrid::s4u::Host* from, simgrid::s4u::Host* to, double bytes,
                                     TrafficMeter& traffic, double rate_Bps) {
  traffic.record_flow(from, to, bytes);
  if (rate_Bps > 0) {
    // A mailbox comm flows from the sender's host: the caller must be on `from`.
    if (simgrid::s4u::this_actor::get_host() != from)
      throw std::logic_error("a rate-capped transfer must be started by an actor on its source host " +
                             from->get_name());
    // SimGrid 3.32 ignores Comm::set_rate on a host-to-host comm (its s4u::Comm::start never hands
    // the rate to the kernel's comm; measured too) but honours it on a mailbox comm: one of the
    // receivers on `to` takes it.
    static int token = 0;  // the payload pointer a mailbox comm needs; no data moves
    auto* mailbox = CappedFlowReceivers::of(to).post();
    simgrid::s4u::CommPtr comm = mailbox->put_init(&token, whole_bytes(bytes))->set_rate(rate_Bps)->start();
    if (traffic.logs_flows()) traffic.log_flow_interval(from, to, bytes, comm);
    return comm;
  }
  // A host-to-host comm starts by itself once both ends are set (SimGrid 3.32): size first.
  auto comm = simgrid::s4u::Comm::sendto_init();
  comm->set_payload_size(whole_bytes(bytes));
  comm->set_source(from);
  comm->set_destination(to);
  if (traffic.logs_flows()) traffic.log_flow_interval(from, to, bytes, comm);
  return comm;
}

void transfer(simgrid::s4u::Host* from, simgrid::s4u::Host* to, double bytes, TrafficMeter& traffic, double rate_Bps) {
  if (bytes <= 0) return;
  const std::size_t n = rate_Bps > 0 ? 1 : sub_flows_between(from, to);
  if (n <= 1) {
    start_transfer(from, to, bytes, traffic, rate_Bps)->wait();
    return;
  }
  const double share = bytes / static_cast<double>(n);
  std::vector<simgrid::s4u::CommPtr> comms{start_transfer(from, to, share, traffic)};
  for (std::size_t i = 1; i < n; ++i) comms.push_back(start_sub_flow(from, to, share, traffic, static_cast<unsigned>(i)));
  for (auto& c : comms) c->wait();
}

std::size_t sub_flows_between(const simgrid::s4u::Host* from, const simgrid::s4u::Host* to) {
  return topologies::sub_flow_count(from, to);
}

simgrid::s4u::CommPtr start_sub_flow(simgrid::s4u::Host* from, simgrid::s4u::Host* to, double bytes,
                                     TrafficMeter& traffic, unsigned variant) {
  traffic.record_flow(from, to, bytes, nullptr, -1, variant);
  auto comm = simgrid::s4u::Comm::sendto_init();
  comm->set_payload_size(whole_bytes(bytes));
  comm->set_source(from);
  // Setting the destination starts the comm, and SimGrid asks the zone for its route then: in the
  // engine's context (no other actor runs in between), with the selector on this sub-flow's variant.
  simgrid::kernel::actor::simcall_answered([&] {
    topologies::ScopedRouteVariant on(variant);
    comm->set_destination(to);
  });
  if (traffic.logs_flows()) traffic.log_flow_interval(from, to, bytes, comm, variant);
  return comm;
}

void read_striped(const std::vector<simgrid::s4u::Disk*>& disks, double bytes, TrafficMeter& traffic,
                  double rate_cap_Bps) {
  striped(disks, bytes, traffic, simgrid::s4u::Io::OpType::READ, rate_cap_Bps);
}

void write_striped(const std::vector<simgrid::s4u::Disk*>& disks, double bytes, TrafficMeter& traffic,
                   double rate_cap_Bps) {
  striped(disks, bytes, traffic, simgrid::s4u::Io::OpType::WRITE, rate_cap_Bps);
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
