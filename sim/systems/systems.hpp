#pragma once
// The schedules luwusim simulates, one file each.
#include <memory>

#include "sim/schedule.hpp"

namespace luwu::sim {

std::unique_ptr<Schedule> make_ddp_schedule(ClusterEnv& env);
std::unique_ptr<Schedule> make_zero3_schedule(ClusterEnv& env);
std::unique_ptr<Schedule> make_zero_offload_schedule(ClusterEnv& env);
std::unique_ptr<Schedule> make_zero_infinity_schedule(ClusterEnv& env);
std::unique_ptr<Schedule> make_switchml_schedule(ClusterEnv& env);
std::unique_ptr<Schedule> make_luwu_schedule(ClusterEnv& env);

}  // namespace luwu::sim
