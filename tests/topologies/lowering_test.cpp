// SimGrid's Engine is one per process and cannot be reset, so every test that builds a platform
// runs in a forked child (fresh engine) and reports back through a pipe.
#include <doctest/doctest.h>

#include <algorithm>
#include <sstream>
#include <sys/wait.h>
#include <unistd.h>

#include <simgrid/s4u/Actor.hpp>
#include <simgrid/s4u/Comm.hpp>
#include <simgrid/s4u/Disk.hpp>
#include <simgrid/s4u/Io.hpp>
#include <simgrid/s4u/Mailbox.hpp>

#include "tests/topologies/topology_test_support.hpp"
#include "topologies/builders.hpp"
#include "topologies/lowering.hpp"

using namespace topo_test;
using namespace luwu::topologies;
namespace sg4 = simgrid::s4u;

namespace {

// Runs `body` in a child process with a fresh SimGrid engine; returns what it printed.
template <typename Body>
std::string in_child(Body body) {
  int fds[2];
  REQUIRE(::pipe(fds) == 0);
  pid_t pid = ::fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    ::close(fds[0]);
    std::string out;
    try {
      int argc = 2;
      char arg0[] = "lowering_test";
      char arg1[] = "--log=root.thres:critical";
      char* argv[] = {arg0, arg1, nullptr};
      sg4::Engine engine(&argc, argv);
      out = body(engine);
    } catch (const std::exception& e) {
      out = std::string("exception: ") + e.what();
    }
    if (::write(fds[1], out.data(), out.size()) < 0) ::_exit(3);
    ::close(fds[1]);
    ::_exit(0);
  }
  ::close(fds[1]);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = ::read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, n);
  ::close(fds[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  CHECK(WIFEXITED(status));
  return out;
}

// The SimGrid route between two vertices compared with the graph's route: "" when equal.
std::string compare_route(const Topology& t, const LoweredPlatform& lp, const std::string& a, const std::string& b,
                          const std::vector<Edge>& expected) {
  std::vector<sg4::Link*> links;
  double latency = 0;
  lp.host(a)->route_to(lp.host(b), links, nullptr);
  latency = route_latency_s(links);
  std::vector<std::string> got, want;
  for (auto* l : links) got.push_back(l->get_name());
  double want_latency = 0;
  Vertex at = t.vertex(a);
  for (Edge e : expected) {
    want.push_back(lp.directed_link(t, e, at)->get_name());
    want_latency += t[e].latency_s;
    at = route_vertices(t, at, {e}).back();
  }
  std::ostringstream msg;
  if (got != want) {
    msg << a << "->" << b << ": got";
    for (auto& s : got) msg << " " << s;
    msg << "; want";
    for (auto& s : want) msg << " " << s;
    msg << "\n";
  }
  if (std::abs(latency - want_latency) > 1e-15) msg << a << "->" << b << ": latency " << latency << " want " << want_latency << "\n";
  return msg.str();
}

// Sends `bytes` from host a to host b for each (a, b) pair at time 0; returns the completion times.
std::vector<double> run_flows(sg4::Engine& engine, const LoweredPlatform& lp,
                              const std::vector<std::pair<std::string, std::string>>& flows, double bytes) {
  auto done = std::make_shared<std::vector<double>>(flows.size(), -1.0);
  for (std::size_t i = 0; i < flows.size(); ++i) {
    auto* box = sg4::Mailbox::by_name("flow" + std::to_string(i));
    sg4::Actor::create("send" + std::to_string(i), lp.host(flows[i].first), [box, bytes] {
      static int payload = 0;
      box->put(&payload, static_cast<uint64_t>(bytes));
    });
    sg4::Actor::create("recv" + std::to_string(i), lp.host(flows[i].second), [box, done, i] {
      box->get<int>();
      (*done)[i] = sg4::Engine::get_clock();
    });
  }
  engine.run();
  return *done;
}

// Lowers `t` in a fresh engine (a child process) and runs `flows` there as run_flows does.
std::vector<double> flow_times_in_child(const Topology& t, const std::vector<std::pair<std::string, std::string>>& flows,
                                        double bytes) {
  const std::string out = in_child([&](sg4::Engine& engine) {
    LoweredPlatform lp = lower_to_simgrid(t, engine);
    std::ostringstream s;
    s.precision(17);
    for (double done : run_flows(engine, lp, flows, bytes)) s << done << " ";
    return s.str();
  });
  std::istringstream in(out);
  std::vector<double> times;
  for (double done = 0; in >> done;) times.push_back(done);
  REQUIRE(times.size() == flows.size());
  return times;
}

double bottleneck_Bps(const Topology& t, const std::vector<Edge>& route) {
  double b = 1e300;
  for (Edge e : route) b = std::min(b, t[e].bandwidth_Bps);
  return b;
}
double latency_s(const Topology& t, const std::vector<Edge>& route) {
  double l = 0;
  for (Edge e : route) l += t[e].latency_s;
  return l;
}

}  // namespace

TEST_CASE("lowering: every vertex is a host, every link split-duplex, SSDs are disks on their owner") {
  LuwuStarParams p;
  p.workers = 4;
  Topology t = build_luwu_star(p);
  std::string out = in_child([&](sg4::Engine& engine) {
    LoweredPlatform lp = lower_to_simgrid(t, engine);
    std::ostringstream s;
    s << engine.get_host_count() << " " << lp.link_of_edge.size() << " " << lp.disks.size() << "\n";
    s << lp.host("gpu2")->get_speed() << " " << lp.host("switch")->get_speed() << "\n";
    auto* disk = lp.disks.at("optnode-ssd1");
    s << disk->get_host()->get_name() << " " << disk->get_read_bandwidth() << " " << disk->get_write_bandwidth() << "\n";
    s << lp.disks.at("nvme3-0")->get_host()->get_name() << "\n";
    s << lp.link_of_edge[0]->get_link_up()->get_name() << " " << lp.link_of_edge[0]->get_link_up()->get_bandwidth() << "\n";
    return s.str();
  });
  std::ostringstream want;
  want << t.vertex_count() << " " << t.link_count() << " " << t.of_kind(VertexKind::Ssd).size() << "\n";
  want << t[t.vertex("gpu2")].speed_flops << " " << 1 << "\n";
  const VertexProps& ssd = t[t.vertex("optnode-ssd1")];
  want << "optnode " << ssd.read_Bps << " " << ssd.write_Bps << "\n";
  want << "cpu3\n";
  want << t[t.edge(0)].name << "_UP " << t[t.edge(0)].bandwidth_Bps << "\n";
  CHECK(out == want.str());
}

TEST_CASE("lowering: SimGrid routes are exactly the graph's routes") {
  LuwuStarParams p;
  p.workers = 4;
  p.nvme_per_worker = 2;
  Topology star = build_luwu_star(p);
  std::string out = in_child([&](sg4::Engine& engine) {
    LoweredPlatform lp = lower_to_simgrid(star, engine);
    std::string diff;
    for (auto [a, b] : std::vector<std::pair<std::string, std::string>>{
             {"gpu0", "gpu3"}, {"gpu3", "gpu0"}, {"gpu1", "optnode"}, {"optnode", "gpu2"}, {"gpu2", "switch"},
             {"nvme0-1", "gpu3"}, {"optnode-ssd2", "nic1"}, {"cpu0", "gpu0"}})
      diff += compare_route(star, lp, a, b, shortest_route(star, star.vertex(a), star.vertex(b)));
    return diff.empty() ? std::string("same") : diff;
  });
  CHECK(out == "same");
}

// A GPU's traffic out of its server goes through its own NIC (NCCL binds each rank to its NIC):
// from the GPU to nic_of(GPU), `between` the NICs, and from the other NIC to the other GPU.
std::vector<Edge> via_own_nics(const Topology& t, Vertex a, Vertex b, const std::vector<Edge>& between) {
  std::vector<Edge> r = shortest_route(t, a, t.nic_of(a));
  r.insert(r.end(), between.begin(), between.end());
  for (Edge e : shortest_route(t, t.nic_of(b), b)) r.push_back(e);
  return r;
}

TEST_CASE("lowering: a fat-tree's routes leave through each GPU's own NIC, and ECMP picks among the minimum-hop routes between NICs") {
  FatTreeParams p;
  p.servers = 4;
  p.gpus_per_server = 2;
  p.gpus_per_pcie_switch = 2;
  p.leaf_down_ports = 2;
  Topology t = build_fat_tree(p);
  // Two GPUs share a PCIe switch with two NICs: each has its own (nic_of), though the other NIC is
  // as few hops away and the plain shortest route would take the lower-numbered one for both.
  REQUIRE(t.nic_of(t.vertex("gpu6")) != t.nic_of(t.vertex("gpu7")));
  std::string out = in_child([&](sg4::Engine& engine) {
    LoweredPlatform shortest = lower_to_simgrid(t, engine, {.name_prefix = "a/"});
    LoweringOptions o;
    o.name_prefix = "b/";
    o.route_choice = RouteChoice::EcmpHash;
    LoweredPlatform hashed = lower_to_simgrid(t, engine, o);
    std::string diff;
    for (auto [a, b] : std::vector<std::pair<std::string, std::string>>{{"gpu0", "gpu7"}, {"gpu7", "gpu0"}, {"gpu1", "gpu4"}}) {
      const Vertex va = t.vertex(a), vb = t.vertex(b);
      diff += compare_route(t, shortest, a, b, via_own_nics(t, va, vb, shortest_route(t, t.nic_of(va), t.nic_of(vb))));
    }
    // Inside a server (NVLink) nothing changes, and ECMP does not hash: two GPUs on one PCIe switch
    // are as few hops apart over it as over the NVSwitch, but NVLink is the faster.
    diff += compare_route(t, shortest, "gpu0", "gpu1", shortest_route(t, t.vertex("gpu0"), t.vertex("gpu1")));
    for (int s = 0; s < 4; ++s)
      for (int i : {0, 1}) {
        const std::string a = "gpu" + std::to_string(2 * s + i), b = "gpu" + std::to_string(2 * s + 1 - i);
        const std::string nvs = "nvswitch" + std::to_string(s);
        std::vector<Edge> over_nvlink = shortest_route(t, t.vertex(a), t.vertex(nvs));
        for (Edge e : shortest_route(t, t.vertex(nvs), t.vertex(b))) over_nvlink.push_back(e);
        diff += compare_route(t, hashed, a, b, over_nvlink);
      }
    // The hashed pick must be one of the ECMP routes between the two NICs.
    std::set<std::string> picks;
    for (auto [a, b] : std::vector<std::pair<std::string, std::string>>{{"gpu0", "gpu6"}, {"gpu1", "gpu6"}, {"gpu0", "gpu7"},
                                                                        {"gpu1", "gpu7"}, {"gpu2", "gpu6"}, {"gpu3", "gpu5"}}) {
      const Vertex va = t.vertex(a), vb = t.vertex(b);
      bool found = false;
      for (const auto& r : ecmp_routes(t, t.nic_of(va), t.nic_of(vb), 64))
        found = found || compare_route(t, hashed, a, b, via_own_nics(t, va, vb, r)).empty();
      if (!found) diff += std::string("hashed route ") + a + "->" + b + " is not an ECMP route between their NICs\n";
      std::vector<sg4::Link*> links;
      hashed.host(a)->route_to(hashed.host(b), links, nullptr);
      std::string names;
      for (auto* l : links) names += l->get_name() + " ";
      picks.insert(names);
    }
    if (picks.size() < 2) diff += "ECMP hashing picked the same route for every pair\n";
    if (shortest.cached_route_count() != 4) diff += "expected 4 cached routes\n";
    return diff.empty() ? std::string("same") : diff;
  });
  CHECK(out == "same");
}

TEST_CASE("lowering: one flow takes latency + bytes / bottleneck bandwidth, split duplex does not share") {
  LuwuStarParams p;
  p.workers = 4;
  Topology t = build_luwu_star(p);
  const double bytes = 1e9;
  auto route = shortest_route(t, t.vertex("gpu0"), t.vertex("gpu3"));
  // Closed form for a lone flow on the CM02 model without cross traffic.
  const double alone = latency_s(t, route) + bytes / bottleneck_Bps(t, route);

  CHECK(flow_times_in_child(t, {{"gpu0", "gpu3"}}, bytes)[0] == doctest::Approx(alone).epsilon(1e-9));

  // Opposite directions over the same links: full duplex, each as fast as alone.
  auto times = flow_times_in_child(t, {{"gpu0", "gpu3"}, {"gpu3", "gpu0"}}, bytes);
  CHECK(times[0] == doctest::Approx(alone).epsilon(1e-9));
  CHECK(times[1] == doctest::Approx(alone).epsilon(1e-9));

  // Two senders into gpu3 share the switch -> nic3 direction: each gets half of it.
  times = flow_times_in_child(t, {{"gpu0", "gpu3"}, {"gpu1", "gpu3"}}, bytes);
  const double shared = latency_s(t, route) + 2 * bytes / bottleneck_Bps(t, route);
  CHECK(times[0] == doctest::Approx(shared).epsilon(1e-6));
  CHECK(times[1] == doctest::Approx(shared).epsilon(1e-6));
}

namespace {

// A CPU owning one SSD of the given rates; `read_write_Bps` 0 leaves the default.
Topology cpu_with_ssd(double read_Bps, double write_Bps, double read_write_Bps) {
  Topology t;
  VertexProps cpu{"cpu", VertexKind::Cpu, "", 0};
  cpu.speed_flops = 1e9;
  VertexProps ssd{"ssd", VertexKind::Ssd, "", 0};
  ssd.read_Bps = read_Bps;
  ssd.write_Bps = write_Bps;
  ssd.read_write_Bps = read_write_Bps;
  ssd.capacity_bytes = 1e12;
  t.add_vertex(cpu);
  t.add_vertex(ssd);
  EdgeProps nvme;
  nvme.kind = LinkKind::Nvme;
  nvme.bandwidth_Bps = std::max(read_Bps, write_Bps);
  t.add_link("cpu", "ssd", nvme);
  return t;
}

// Simulated seconds to read `read_bytes` while writing `write_bytes` on the lowered SSD.
double simulated_read_while_write_s(const Topology& t, double read_bytes, double write_bytes) {
  const std::string out = in_child([&](sg4::Engine& engine) {
    LoweredPlatform lp = lower_to_simgrid(t, engine);
    sg4::Disk* disk = lp.disks.at("ssd");
    double finished = -1;
    sg4::Actor::create("io", lp.host("cpu"), [&] {
      auto read = disk->read_async(static_cast<sg_size_t>(read_bytes));
      auto write = disk->write_async(static_cast<sg_size_t>(write_bytes));
      read->wait();
      write->wait();
      finished = sg4::Engine::get_clock();
    });
    engine.run();
    std::ostringstream s;
    s.precision(17);
    s << finished;
    return s.str();
  });
  return std::stod(out);
}

}  // namespace

TEST_CASE("lowering: an SSD's reads and writes at once share its read_write bandwidth (models/storage.hpp)") {
  const double gb = 1e9;
  // Shared limit binding: 1 GB each way, 2 GB/s per direction, 2.5 GB/s together -> 2 / 2.5 s.
  Topology shared = cpu_with_ssd(2 * gb, 2 * gb, 2.5 * gb);
  CHECK(simulated_read_while_write_s(shared, gb, gb) == doctest::Approx(0.8).scale(0).epsilon(1e-6));
  // Read limit binding: 1 GB/s reads, 2.5 GB/s writes, 2.2 GB/s together -> 1 GB / 1 GB/s.
  Topology read_bound = cpu_with_ssd(1 * gb, 2.5 * gb, 2.2 * gb);
  CHECK(simulated_read_while_write_s(read_bound, gb, gb) == doctest::Approx(1.0).scale(0).epsilon(1e-6));
  // Absent: the faster direction's rate, 2 GB/s for both together -> 1 s.
  Topology by_default = cpu_with_ssd(2 * gb, 2 * gb, 0);
  CHECK(simulated_read_while_write_s(by_default, gb, gb) == doctest::Approx(1.0).scale(0).epsilon(1e-6));
}

namespace {

// Three switches in a line, a - b - c, and a CPU d behind c: a flow from a to d crosses three
// links, one from c to d only the last; `far_latency_s` on a-b makes the long route's latency
// much larger than the short one's.
Topology line_of_switches(double far_latency_s) {
  Topology t;
  for (const char* name : {"a", "b", "c"}) t.add_vertex(VertexProps{name, VertexKind::Switch, "", 0});
  t.add_vertex(VertexProps{"d", VertexKind::Cpu, "", 0});
  EdgeProps link;
  link.kind = LinkKind::Ethernet;
  link.bandwidth_Bps = 10e9;
  link.latency_s = far_latency_s;
  t.add_link("a", "b", link);
  link.latency_s = 1e-6;
  t.add_link("b", "c", link);
  t.add_link("c", "d", link);
  return t;
}

}  // namespace

TEST_CASE("lowering: flows sharing a link get equal shares whatever their route's latency (RDMA fabrics share per flow, not per round trip)") {
  // SimGrid's CM02 weighs a flow's share by its route latency (TCP's round-trip unfairness); the
  // fabrics luwusim models (RoCE, InfiniBand, PCIe, NVLink) arbitrate per flow.  Two flows of S
  // bytes into d share c -> d at C/2 each, and both end at about 2 S / C, the long one 100 us of
  // latency later at most; under round-trip weighting the short one would take 100/1 of it.
  const double bytes = 1e9, C = 10e9, far_latency = 100e-6;
  const auto times = flow_times_in_child(line_of_switches(far_latency), {{"a", "d"}, {"c", "d"}}, bytes);
  const double long_flow = times[0], short_flow = times[1];
  // The short flow runs alone at C from 1 us until the long one's bytes arrive (102 us), then both
  // at C / 2 until the short one ends; the long one then finishes alone at C.  c -> d is busy from
  // 1 us to the end: the long flow ends at 1 us + 2 S / C, the short one the long one's head start
  // (101 us at C) earlier.
  const double long_expected = 1e-6 + 2 * bytes / C;
  CHECK(long_flow == doctest::Approx(long_expected).epsilon(1e-7));
  CHECK(short_flow == doctest::Approx(long_expected - (far_latency + 1e-6)).epsilon(1e-7));
}
