#pragma once
// The out-of-core optimizer step (ZeRO-Infinity's swapper on a worker, LuWu's optimizer node):
// optimizer state streams from SSD into DRAM, is updated, and is written back, unit after unit (a
// sub-group of parameters, a layer), the three stages overlapping as the policy allows.  The
// update stage is the thread that drives the swapper: it is done with unit k once k is updated
// and, with `write_buffers` > 0, unit k + 1 - write_buffers is written back (1: it waits for its
// own write-back, a synchronous swap-out; 2: one write-back may still be in flight).  Then:
//  - reads go one at a time, at most `read_ahead` units ahead: unit k's read starts once the
//    update stage is done with unit k - 1 - read_ahead (0: strictly after it, no prefetch);
//  - updates go one at a time on the host's processor, each once its state is read, its other
//    inputs (a gradient) are ready and the update stage is done with unit k - 1;
//  - each write-back starts when its update is done: one at a time (`serial_writes`, one writer
//    thread) or all at once (asynchronous I/O).
// {0, 1, true} is strictly serial: read, update, write back, then the next unit.
// read_rate_cap_Bps / write_rate_cap_Bps > 0 bound each read and write-back stream as the
// swapper's I/O queue does (request size and queue depth, models/storage.hpp's Little's law).
// With a memory bus (set_memory_bus: a pacing host whose speed is the host's DRAM bandwidth,
// sim/engine/pacing_host.hpp), every read and write-back also moves its bytes through DRAM and
// every update its `update_memory_bytes`, so the stages, and whatever else the host's DRAM
// serves meanwhile, share its bandwidth.
// The same stages carry other work of the host in order (LuWu accumulates earlier micro-batches'
// gradients on the update stage).
// With `lanes` > 0 the stages do not overlap within a unit's lane (layer-centric pipelining, LuWu's
// ablation): unit k runs on lane k mod lanes, once its inputs are done, its read, update and
// write-back one after another; the lanes run side by side, each update on its own threads (a
// delay, not a share of the host's processor).
#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <simgrid/s4u/Actor.hpp>

#include "sim/engine/pacing_host.hpp"
#include "sim/engine/stream.hpp"
#include "sim/engine/traffic_meter.hpp"
#include "sim/engine/transfers.hpp"

namespace luwu::sim {

struct OutOfCorePolicy {
  int read_ahead = 1;
  int write_buffers = 0;  // 0: an update never waits for a write-back
  bool serial_writes = true;
  double read_rate_cap_Bps = -1;   // <= 0: the disks' own rate
  double write_rate_cap_Bps = -1;  // <= 0: the disks' own rate
  int lanes = 0;  // > 0: layer-centric lanes instead of overlapping stages
};

class OutOfCorePipeline {
 public:
  OutOfCorePipeline(std::string component, simgrid::s4u::Host* host, std::vector<simgrid::s4u::Disk*> disks,
                    OutOfCorePolicy policy, TrafficMeter& traffic, Timeline* timeline, const std::string& engine = "cpu")
      : host_(host),
        disks_(std::move(disks)),
        policy_(policy),
        traffic_(traffic),
        read_(component, "state read (ssd)", "io", host, timeline),
        update_(component, "update (" + engine + ")", "optimizer", host, timeline),
        write_(component, "state write-back (ssd)", "io", host, timeline) {
    for (int i = 0; i < policy_.lanes; ++i)
      lanes_.push_back(std::make_unique<Stream>(component, "layer lane " + std::to_string(i) + " (" + engine + ")",
                                                "optimizer", host, timeline));
  }

  void set_memory_bus(simgrid::s4u::Host* bus) { bus_ = bus; }

  // Unit k: read `read_bytes` of state from the disks, run `update_s` seconds on the host's
  // processor once `inputs` are done (moving `update_memory_bytes` through the memory bus, if
  // any), write `write_bytes` back.  Returns the write-back's completion.
  CompletionPtr add_unit(const std::string& label, double read_bytes, double update_s, double write_bytes,
                         std::vector<CompletionPtr> inputs = {}, double update_memory_bytes = 0) {
    const std::size_t k = updated_.size();
    if (!lanes_.empty()) {
      auto done = lanes_[k % lanes_.size()]->enqueue(
          "layer " + label,
          [this, read_bytes, update_s, write_bytes, update_memory_bytes] {
            read(read_bytes);
            paced(bus_, update_memory_bytes, [update_s] { simgrid::s4u::this_actor::sleep_for(update_s); });
            write(write_bytes);
          },
          std::move(inputs));
      updated_.push_back(done);
      written_.push_back(done);
      released_.push_back({done});
      return done;
    }
    const std::size_t ahead = static_cast<std::size_t>(policy_.read_ahead);
    auto state = read_.enqueue(
        "read state " + label,
        [this, read_bytes] { read(read_bytes); },
        k >= ahead + 1 ? released_[k - ahead - 1] : std::vector<CompletionPtr>{});
    inputs.push_back(state);
    if (k >= 1) inputs.insert(inputs.end(), released_[k - 1].begin(), released_[k - 1].end());
    updated_.push_back(update_.enqueue(
        "update " + label,
        [this, update_s, update_memory_bytes] { paced(bus_, update_memory_bytes, [&] { execute_on(host_, update_s); }); },
        std::move(inputs)));
    written_.push_back(write_back("write state " + label, write_bytes, updated_.back()));
    // When the update stage is done with unit k (see above).
    std::vector<CompletionPtr> released{updated_.back()};
    const std::size_t buffers = static_cast<std::size_t>(policy_.write_buffers);
    if (buffers > 0 && k + 1 >= buffers) released.push_back(written_[k + 1 - buffers]);
    released_.push_back(std::move(released));
    return written_.back();
  }

  // Work on the update stage between units, in order (e.g. accumulating a gradient).
  CompletionPtr add_update_work(const std::string& label, double seconds, std::vector<CompletionPtr> deps,
                                double memory_bytes = 0) {
    return update_.enqueue(
        label, [this, seconds, memory_bytes] { paced(bus_, memory_bytes, [&] { execute_on(host_, seconds); }); },
        std::move(deps));
  }

  // Done when the last unit added so far is updated.
  CompletionPtr last_update() const { return updated_.back(); }

  // Done when every unit added so far is written back.
  std::vector<CompletionPtr> write_backs() const { return written_; }

 private:
  // SSD -> DRAM and DRAM -> SSD, through the memory bus when there is one.
  void read(double bytes) {
    paced(bus_, bytes, [&] { read_striped(disks_, bytes, traffic_, policy_.read_rate_cap_Bps); });
  }
  void write(double bytes) {
    paced(bus_, bytes, [&] { write_striped(disks_, bytes, traffic_, policy_.write_rate_cap_Bps); });
  }

  CompletionPtr write_back(std::string label, double bytes, CompletionPtr updated) {
    auto write = [this, bytes] { this->write(bytes); };
    if (policy_.serial_writes) return write_.enqueue(std::move(label), write, {std::move(updated)});
    auto done = make_completion();
    simgrid::s4u::Actor::create("optimizer state write-back", host_, [write, updated, done] {
      updated->wait();
      write();
      done->set();
    });
    return done;
  }

  simgrid::s4u::Host* host_;
  simgrid::s4u::Host* bus_ = nullptr;
  std::vector<simgrid::s4u::Disk*> disks_;
  OutOfCorePolicy policy_;
  TrafficMeter& traffic_;
  Stream read_, update_, write_;
  std::vector<std::unique_ptr<Stream>> lanes_;
  std::vector<CompletionPtr> updated_, written_;
  std::vector<std::vector<CompletionPtr>> released_;
};

}  // namespace luwu::sim
