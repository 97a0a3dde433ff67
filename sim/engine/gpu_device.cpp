#include "sim/engine/gpu_device.hpp"

#include <algorithm>
#include <mutex>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>

#include "sim/engine/pacing_host.hpp"

namespace luwu::sim {

GpuDevice::GpuDevice(int rank, simgrid::s4u::Host* host, const models::GpuSpec& spec, Timeline* timeline,
                     SmSharing sharing, double network_goodput_Bps, double host_staged_Bps)
    : rank_(rank),
      host_(host),
      spec_(spec),
      timeline_(timeline),
      name_("gpu" + std::to_string(rank)),
      sharing_(sharing),
      mutex_(simgrid::s4u::Mutex::create()),
      boundary_(simgrid::s4u::ConditionVariable::create()) {
  const bool staged = host_staged_Bps > 0;
  // What a collective reaches with nothing beside it: the NIC's goodput, or the host path's rate below it.
  double path_Bps = network_goodput_Bps;
  if (staged) path_Bps = network_goodput_Bps > 0 ? std::min(network_goodput_Bps, host_staged_Bps) : host_staged_Bps;
  const double paced_Bps = (1 - spec_.collective_bandwidth_drop) * path_Bps;
  // Between GEMMs the engine must never be what limits a GPUDirect collective: it runs at the
  // HBM's rate; through host memory it runs at the staged rate.
  const double free_Bps = staged ? std::min(spec_.hbm_Bps, host_staged_Bps) : spec_.hbm_Bps;
  if (staged || (spec_.collective_bandwidth_drop > 0 && paced_Bps > 0 && paced_Bps < spec_.hbm_Bps)) {
    const std::vector<double> speeds{free_Bps, std::min(free_Bps, paced_Bps > 0 ? paced_Bps : free_Bps)};
    engine_ = make_pacing_host(host->get_name() + "/collective-engine", speeds);
    receive_engine_ = make_pacing_host(host->get_name() + "/collective-engine-receive", speeds);
  }
}

void GpuDevice::run_kernel(const std::string& label, const workloads::Kernel* kernel, const char* category,
                           double seconds, double sm_share, bool is_gemm, double* account) {
  if (seconds <= 0) return;
  host_ready_s_ += launch_host_s_;
  await_host(label);
  ++times_.kernels;
  const double start = simgrid::s4u::Engine::get_clock();
  running_sm_share_ = sm_share;
  running_since_s_ = start;
  ++launched_;
  const bool paces = engine_ != nullptr && is_gemm;
  if (paces) {
    engine_->set_pstate(1);
    receive_engine_->set_pstate(1);
  }
  // The host's speed stands for the GPU's undisturbed throughput: `seconds` of work at that speed;
  // under MPS the compute stream always has only its partition of the SMs.
  double work = seconds * host_->get_speed();
  if (sharing_ == SmSharing::Mps) work /= 1 - spec_.collective_sm_share;
  simgrid::s4u::this_actor::execute(work);
  if (paces) {
    engine_->set_pstate(0);
    receive_engine_->set_pstate(0);
  }
  // Actors take turns (no lock needed to update the gate); notifying is a simcall, made only
  // when a collective waits for this boundary.
  running_sm_share_ = 0;
  ++boundaries_;
  if (boundary_waiters_ > 0) {
    std::unique_lock lock(*mutex_);
    boundary_->notify_all();
  }
  const double end = simgrid::s4u::Engine::get_clock();
  *account += end - start;
  if (account == &times_.compute_s) times_.undisturbed_compute_s += seconds;
  if (timeline_->enabled()) {  // the span's name and amounts are built only for a timeline
    if (kernel == nullptr)
      timeline_->add(name_, "compute", label, category, start, end);
    else
      // The trace counts matrix-multiply FLOPs (GEMM, attention); an elementwise kernel carries none.
      timeline_->add(name_, "compute", label + ": " + kernel->name, category, start, end,
                     SpanAmounts{-1, kernel->flops > 0 ? kernel->flops : -1});
  }
}

void GpuDevice::run_kernels(const std::string& label, std::span<const KernelRun> kernels) {
  for (const auto& k : kernels)
    run_kernel(label, k.kernel, "compute", k.seconds, k.sm_share, k.is_gemm, &times_.compute_s);
}

void GpuDevice::optimizer_step(const std::string& label, double seconds) {
  run_kernel(label, nullptr, "optimizer", seconds, 1.0, false, &times_.optimizer_s);
}

void GpuDevice::await_collective_launch(std::uint64_t issued_after) {
  if (sharing_ != SmSharing::NonPreemptive) return;
  if (running_sm_share_ <= 1 - spec_.collective_sm_share) return;
  const double now = simgrid::s4u::Engine::get_clock();
  if (running_since_s_ == now && launched_ > issued_after) return;  // the kernel queued behind it
  // Not "until enough SMs are free": the next kernel starts at the same instant, but the
  // collective's blocks were queued first and take their SMs at the boundary.
  const double start = simgrid::s4u::Engine::get_clock();
  const std::uint64_t seen = boundaries_;
  ++boundary_waiters_;
  {
    std::unique_lock lock(*mutex_);
    while (boundaries_ == seen) boundary_->wait(lock);
  }
  --boundary_waiters_;
  times_.collective_launch_wait_s += simgrid::s4u::Engine::get_clock() - start;
}

void GpuDevice::wait(const CompletionPtr& done, WaitCause cause, const std::string& label) {
  if (done->done()) return;
  double start = simgrid::s4u::Engine::get_clock();
  done->wait();
  account_wait(cause, label, start);
}

void GpuDevice::host_wait(const CompletionPtr& done, WaitCause cause, const std::string& label) {
  wait(done, cause, label);
  host_ready_s_ = std::max(host_ready_s_, simgrid::s4u::Engine::get_clock());
}

void GpuDevice::host_work(double seconds, std::string_view label) {
  if (seconds <= 0) return;
  host_ready_s_ += seconds;
  await_host(label);
}

void GpuDevice::await_host(std::string_view label) {
  const double now = simgrid::s4u::Engine::get_clock();
  if (host_ready_s_ <= now) return;
  simgrid::s4u::this_actor::sleep_until(host_ready_s_);
  const double end = simgrid::s4u::Engine::get_clock();
  times_.host_launch_wait_s += end - now;
  if (timeline_->enabled()) timeline_->add(name_, "compute", "wait: host launching " + std::string(label), "idle", now, end);
}

void GpuDevice::account_wait(WaitCause cause, const std::string& label, double since_s) {
  double waited = simgrid::s4u::Engine::get_clock() - since_s;
  switch (cause) {
    case WaitCause::Communication: times_.communication_wait_s += waited; break;
    case WaitCause::Optimizer: times_.optimizer_s += waited; break;
    case WaitCause::Io: times_.io_wait_s += waited; break;
  }
  if (waited > 0 && timeline_->enabled()) timeline_->add(name_, "compute", "wait: " + label, "idle", since_s, since_s + waited);
}

double GpuDevice::load_share(LoadKind kind) const {
  if (kind == LoadKind::NicDma) return spec_.dma_interference;
  // Under MPS the collective's SMs are never the compute stream's: it loses only the contention.
  if (sharing_ == SmSharing::Mps) return std::max(0.0, spec_.collective_interference - spec_.collective_sm_share);
  return spec_.collective_interference;
}

namespace {
constexpr double kLoadHorizon_s = 1e9;  // longer than any simulation: the load is cancelled, never finishes
}

GpuDevice::LoadScope::LoadScope(GpuDevice& gpu, LoadKind kind) : gpu_(gpu), kind_(kind) {
  Load& load = gpu_.load(kind_);
  if (load.depth++ > 0) return;
  const double share = gpu_.load_share(kind_);
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
