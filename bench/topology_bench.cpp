// Time to build, validate and lower a 4,096-GPU fat-tree (512 DGX-like servers of 8 GPUs, a NIC
// per GPU, 3 tiers of 64-port switches), plus the first routes of a ring over all GPUs.
// Target: under 5 s on the project machine (2 cores).
#include <chrono>
#include <cstdio>

#include "topologies/builders.hpp"
#include "topologies/lowering.hpp"
#include "topologies/validate.hpp"

namespace {
double since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

int main(int argc, char** argv) {
  using namespace luwu::topologies;
  simgrid::s4u::Engine engine(&argc, argv);
  FatTreeParams p;
  p.servers = 512;
  p.gpus_per_server = 8;
  p.tiers = 3;
  p.switch_profile = "tofino";
  p.nic_profile = "rdma-nic-100g";

  auto t0 = std::chrono::steady_clock::now();
  Topology t = build_fat_tree(p);
  double build_s = since(t0);
  auto t1 = std::chrono::steady_clock::now();
  validate_topology(t, "");
  double validate_s = since(t1);
  auto t2 = std::chrono::steady_clock::now();
  LoweredPlatform lp = lower_to_simgrid(t, engine);
  double lower_s = since(t2);
  auto t3 = std::chrono::steady_clock::now();
  auto gpus = t.gpus();
  std::vector<simgrid::s4u::Link*> links;
  std::size_t hops = 0;
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    links.clear();
    lp.host_of_vertex[gpus[i]]->route_to(lp.host_of_vertex[gpus[(i + 1) % gpus.size()]], links, nullptr);
    hops += links.size();
  }
  double ring_s = since(t3);
  std::printf("fat-tree: %zu GPUs, %zu vertices, %zu links\n", gpus.size(), t.vertex_count(), t.link_count());
  std::printf("build %.3f s, validate %.3f s, lower %.3f s, total %.3f s\n", build_s, validate_s, lower_s,
              build_s + validate_s + lower_s);
  std::printf("ring routes (%zu pairs, %zu links in all): %.3f s\n", gpus.size(), hops, ring_s);
  return 0;
}
