#pragma once
// One LuWu iteration as three kinds of actors around the switch (luwu.cpp tells the story):
//  - the optimizer node's parameter multicast ("optnode/param multicast"),
//  - each worker's rank (Schedule::run_rank: compute, and its SmartNIC's gradient upload),
//  - the optimizer node's update pipeline ("optnode/pipeline").
// They meet at countdowns: a layer's parameter pieces delivered to a worker, every worker done
// with a layer, a gradient's aggregated pieces at the node.
#include <memory>

#include "sim/systems/schedule.hpp"
#include "sim/systems/luwu/luwu.hpp"

namespace luwu::sim {

std::unique_ptr<Schedule> make_luwu_schedule(const LuwuSettings& settings, ClusterEnv& env);

}  // namespace luwu::sim
