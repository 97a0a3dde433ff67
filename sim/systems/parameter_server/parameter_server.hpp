#pragma once
// Model-in-server data parallelism: plain parameter servers (Li et al., OSDI'14; BytePS, Jiang et
// al., OSDI'20), the design LuWu's "model-in-network" is named against.
#include "sim/systems/parameter_servers.hpp"
#include "sim/systems/system.hpp"

namespace luwu::sim {

struct ParameterServerSystemSettings {
  // Gradient bucket size, as DDP's (PyTorch's bucket_cap_mb default, 25 MB; BytePS partitions
  // tensors of a few MB, and a bucket is split over the servers).
  double bucket_bytes = 25e6;
  ParameterServerSettings servers;
};

SystemPtr parse_parameter_server(const SystemEntry& entry);

}  // namespace luwu::sim
