#pragma once
// A stream is what a CUDA stream (or a DMA queue, or a CPU thread) is: one actor that runs the
// work enqueued on it in order, each item after its dependencies.  Enqueueing returns the item's
// completion, so schedules compose work across streams the way CUDA code does with events.
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Host.hpp>
#include <simgrid/s4u/Semaphore.hpp>

#include "sim/engine/completion.hpp"
#include "sim/engine/timeline.hpp"

namespace luwu::sim {

class Stream {
 public:
  // The stream's actor runs on `host` (work that executes uses that host's processor).
  Stream(std::string component, std::string track, std::string category, simgrid::s4u::Host* host,
         Timeline* timeline)
      : state_(std::make_shared<State>()) {
    state_->component = std::move(component);
    state_->track = std::move(track);
    state_->category = std::move(category);
    state_->timeline = timeline;
    state_->work_posted = simgrid::s4u::Semaphore::create(0);
    auto state = state_;
    simgrid::s4u::Actor::create(state_->component + "/" + state_->track, host, [state] { run(*state); })
        ->daemonize();
  }

  CompletionPtr enqueue(std::string label, std::function<void()> work, std::vector<CompletionPtr> deps = {}) {
    auto done = make_completion();
    state_->queue.push_back(Item{std::move(label), std::move(work), std::move(deps), done});
    // SimGrid's actors take turns and never preempt one another, so the queue needs no lock; the
    // stream's actor is woken only when it waits for work (each simcall is a context switch to the
    // engine and back).
    if (state_->idle) {
      state_->idle = false;
      state_->work_posted->release();
    }
    return done;
  }

  double busy_s() const { return state_->busy_s; }

 private:
  struct Item {
    std::string label;
    std::function<void()> work;
    std::vector<CompletionPtr> deps;
    CompletionPtr done;
  };
  struct State {
    std::string component, track, category;
    Timeline* timeline = nullptr;
    simgrid::s4u::SemaphorePtr work_posted;  // released when work comes to an idle stream
    std::deque<Item> queue;
    bool idle = false;  // its actor waits for work
    double busy_s = 0;
  };

  static void run(State& s) {
    for (;;) {
      if (s.queue.empty()) {
        s.idle = true;
        s.work_posted->acquire();
      }
      Item item = std::move(s.queue.front());
      s.queue.pop_front();
      for (auto& d : item.deps) d->wait();
      // With a timeline, the bytes the item's work moves (flows, disk I/O) are its span's.
      const bool amounts = s.timeline != nullptr && s.timeline->enabled();
      const long actor = amounts ? simgrid::s4u::this_actor::get_pid() : -1;
      if (amounts) s.timeline->open_amounts(actor);
      double start = simgrid::s4u::Engine::get_clock();
      item.work();
      double end = simgrid::s4u::Engine::get_clock();
      s.busy_s += end - start;
      if (amounts) {
        const double bytes = s.timeline->close_amounts(actor);
        s.timeline->add(s.component, s.track, std::move(item.label), s.category, start, end,
                        SpanAmounts{bytes > 0 ? bytes : -1});
      }
      item.done->set();
    }
  }

  std::shared_ptr<State> state_;
};

}  // namespace luwu::sim
