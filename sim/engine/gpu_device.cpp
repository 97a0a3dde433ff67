#include "sim/engine/gpu_device.hpp"

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>

namespace luwu::sim {

GpuDevice::GpuDevice(int rank, simgrid::s4u::Host* host, const models::GpuSpec& spec, Timeline* timeline)
    : rank_(rank), host_(host), spec_(spec), timeline_(timeline), name_("gpu" + std::to_string(rank)) {}

void GpuDevice::execute_for(double seconds) {
  if (seconds <= 0) return;
  ++times_.kernels;
  // The host's speed stands for the GPU's undisturbed throughput: `seconds` of work at that speed.
  simgrid::s4u::this_actor::execute(seconds * host_->get_speed());
}

void GpuDevice::compute(const std::string& label, double seconds) {
  double start = simgrid::s4u::Engine::get_clock();
  execute_for(seconds);
  double end = simgrid::s4u::Engine::get_clock();
  times_.compute_s += end - start;
  timeline_->add(name_, "compute", label, "compute", start, end);
}

void GpuDevice::optimizer_step(const std::string& label, double seconds) {
  double start = simgrid::s4u::Engine::get_clock();
  execute_for(seconds);
  double end = simgrid::s4u::Engine::get_clock();
  times_.optimizer_s += end - start;
  timeline_->add(name_, "compute", label, "optimizer", start, end);
}

void GpuDevice::wait(const CompletionPtr& done, WaitCause cause, const std::string& label) {
  if (done->done()) return;
  double start = simgrid::s4u::Engine::get_clock();
  done->wait();
  double waited = simgrid::s4u::Engine::get_clock() - start;
  switch (cause) {
    case WaitCause::Communication: times_.communication_wait_s += waited; break;
    case WaitCause::Optimizer: times_.optimizer_s += waited; break;
    case WaitCause::Io: times_.io_wait_s += waited; break;
  }
  if (waited > 0) timeline_->add(name_, "compute", "wait: " + label, "idle", start, start + waited);
}

namespace {
constexpr double kLoadHorizon_s = 1e9;  // longer than any simulation: the load is cancelled, never finishes
}

GpuDevice::LoadScope::LoadScope(GpuDevice& gpu, LoadKind kind) : gpu_(gpu), kind_(kind) {
  Load& load = gpu_.load(kind_);
  if (load.depth++ > 0) return;
  double share = kind_ == LoadKind::CollectiveKernel ? gpu_.spec_.collective_interference : gpu_.spec_.dma_interference;
  if (share <= 0) return;
  // A background activity bounded to `share` of the host's speed: max-min sharing leaves the
  // compute kernel the rest, i.e. it runs (1 - share) as fast while the load lasts.
  // Starting is a simcall: other actors of the same instant run meanwhile (with one rank, a
  // collective takes no time and its scope may close then), so the load is published only once
  // it is started.
  auto exec = simgrid::s4u::Exec::init();
  exec->set_flops_amount(kLoadHorizon_s * gpu_.host_->get_speed());
  exec->set_host(gpu_.host_);
  exec->set_bound(share * gpu_.host_->get_speed());
  exec->start();
  load.exec = exec;
}

GpuDevice::LoadScope::~LoadScope() {
  Load& load = gpu_.load(kind_);
  if (--load.depth > 0 || !load.exec) return;
  // Cancelling is a simcall too: a scope opened meanwhile starts a load of its own, which must
  // not release this one while it is being cancelled (it did: a use after free in SimGrid).
  simgrid::s4u::ExecPtr exec = std::move(load.exec);
  load.exec = nullptr;
  exec->cancel();
}

}  // namespace luwu::sim
