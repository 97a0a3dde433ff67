#pragma once
// A SimGrid engine for one simulation: quiet, its network model configured for RDMA fabrics
// (topologies::configure_engine_for_rdma says which model and why; the all-reduce calibration
// test holds it to the alpha-beta closed form), its actors' contexts sized for luwusim's actors.
// SimGrid allows one engine per process, so every simulation runs in its own process (see
// isolated_run.hpp).
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <sstream>
#include <string>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Engine.hpp>
#include <xbt/log.h>

#include "topologies/lowering.hpp"

namespace luwu::sim {

// Actor contexts (SimGrid's "contexts/*" settings; docs/performance.md has the measurements).
// Every actor gets a stack of its own, allocated when it is created and freed when it ends.
// SimGrid's default, 8 MiB with a one-page guard below it (mmap, two mprotect, munmap per actor),
// made 38% of the paper scenario's CPU time the kernel's.  128 KiB: the lead measured 3.6 s ->
// 3.2 s on the paper scenario; every actor of that scenario and of the test suite ran in it.  The
// guard page stays: an overflow then stops the simulation (SIGSEGV, reported by isolated_run)
// instead of silently corrupting memory; dropping it (1.6 s measured) needs the deepest actor
// stack measured first, which has not been done.
// AddressSanitizer's frames are several times larger (a 128 KiB stack overflowed under it in
// SimGrid's own mailbox get): sanitized builds keep SimGrid's default 8 MiB.
#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define LUWUSIM_ADDRESS_SANITIZER 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(LUWUSIM_ADDRESS_SANITIZER)
inline constexpr int kActorStackKiB = 8192;
#else
inline constexpr int kActorStackKiB = 128;
#endif

#if defined(__SANITIZE_ADDRESS__) || defined(LUWUSIM_ADDRESS_SANITIZER)
// A daemon actor still at work when the simulation ends is killed: SimGrid throws into it and it
// unwinds through our frames.  AddressSanitizer does not know SimGrid's swapped stacks (Debian's
// SimGrid is built without its fiber annotations), so at the first frame that cleans up it cannot
// clear the red zones of the frames the exception skipped, and its own sigaltstack call then lands
// on one: a "stack-buffer-overflow" that is not (google/sanitizers#189), wherever the stale zones
// happen to lie.  SimGrid runs an actor's exit callbacks on its own stack before it throws: this
// one clears the stack red zones between there and the top of the actor's stack, walking up the
// shadow memory (x86-64 Linux layout: shadow = (address >> 3) + 0x7fff8000) until a heap red zone
// (the stack's allocation ends there) or 8 MiB.
__attribute__((no_sanitize_address, noinline)) inline void clear_stack_red_zones_above_here() {
  volatile char here = 0;
  auto granule = reinterpret_cast<std::uintptr_t>(&here) & ~std::uintptr_t{7};
  const std::uintptr_t end = granule + static_cast<std::uintptr_t>(kActorStackKiB) * 1024;
  for (; granule < end; granule += 8) {
    auto* shadow = reinterpret_cast<unsigned char*>((granule >> 3) + 0x7fff8000);
    const unsigned char s = *shadow;
    if (s == 0xf1 || s == 0xf2 || s == 0xf3 || s == 0xf5 || s == 0xf8)
      *shadow = 0;  // a stack red zone or a returned frame's variable
    else if (s >= 0xf9)  // heap, global or allocator red zone: past the stack
      break;
  }
}
inline void clear_red_zones_when_killed() {
  simgrid::s4u::Actor::on_creation_cb([](simgrid::s4u::Actor& actor) {
    actor.on_exit([](bool killed) {
      if (killed) clear_stack_red_zones_above_here();
    });
  });
}
#else
inline void clear_red_zones_when_killed() {}
#endif
inline constexpr int kActorStackGuardPages = 1;

// LUWUSIM_SIMGRID_CONFIG="key:value key:value" (e.g. "contexts/stack-size:16") overrides SimGrid
// settings after these, to measure them again; it changes how fast a simulation runs, never what
// it computes.
inline void configure_actor_contexts() {
  simgrid::s4u::Engine::set_config("contexts/stack-size:" + std::to_string(kActorStackKiB));
  simgrid::s4u::Engine::set_config("contexts/guard-size:" + std::to_string(kActorStackGuardPages));
  if (const char* extra = std::getenv("LUWUSIM_SIMGRID_CONFIG")) {
    std::istringstream settings(extra);
    for (std::string setting; settings >> setting;) simgrid::s4u::Engine::set_config(setting);
  }
}

inline std::unique_ptr<simgrid::s4u::Engine> make_engine(bool verbose = false) {
  int argc = 1;
  static char name[] = "luwusim";
  char* argv[] = {name, nullptr};
  if (!verbose) xbt_log_control_set("root.thresh:critical");
  auto engine = std::make_unique<simgrid::s4u::Engine>(&argc, argv);
  topologies::configure_engine_for_rdma(*engine);
  configure_actor_contexts();
  clear_red_zones_when_killed();
  return engine;
}

}  // namespace luwu::sim
