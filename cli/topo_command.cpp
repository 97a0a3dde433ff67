// luwusim topo: build, show and draw cluster topologies.
//   luwusim topo build --kind luwu-star --workers 8 [--network 100Gb/s ...] -o topo.json
//   luwusim topo show FILE [--json]
//   luwusim topo dot FILE -o FILE.dot      (and FILE.png when graphviz's `dot` is installed)
#include <cerrno>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <sys/wait.h>
#include <unistd.h>

#include "cli/command_registry.hpp"
#include "cli/quantity_flag.hpp"
#include "common/atomic_write.hpp"
#include "common/choice.hpp"
#include "common/units.hpp"
#include "topologies/builders.hpp"
#include "topologies/dot.hpp"
#include "topologies/json_format.hpp"
#include "topologies/summary.hpp"
#include "topologies/validate.hpp"

namespace {

using namespace luwu::topologies;

// What `argv` prints on stdout, run without a shell (no quoting of paths); nullopt when it cannot
// start or exits non-zero.
std::optional<std::string> output_of(std::vector<std::string> argv) {
  int out[2];
  if (::pipe(out) != 0) return std::nullopt;
  const pid_t pid = ::fork();
  if (pid < 0) {
    ::close(out[0]);
    ::close(out[1]);
    return std::nullopt;
  }
  if (pid == 0) {
    ::dup2(out[1], STDOUT_FILENO);
    ::close(out[0]);
    ::close(out[1]);
    std::vector<char*> args;
    for (auto& a : argv) args.push_back(a.data());
    args.push_back(nullptr);
    ::execvp(args[0], args.data());
    ::_exit(127);
  }
  ::close(out[1]);
  std::string text;
  char buf[65536];
  for (ssize_t n; (n = ::read(out[0], buf, sizeof buf)) != 0;) {
    if (n < 0) {
      if (errno == EINTR) continue;
      break;
    }
    text.append(buf, static_cast<std::size_t>(n));
  }
  ::close(out[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return std::nullopt;
  return text;
}

struct BuildOptions {
  std::string kind = "luwu-star";
  std::string output;
  int workers = 8;        // luwu-star workers
  int servers = 0;        // dgx/fat-tree servers
  int gpus_per_server = 0;  // 0: the builder's default (dgx/fat-tree/wan 8, luwu-star 1)
  int gpus_per_nic = 1;
  int gpus_per_pcie_switch = 2;
  int nvme = -1;          // per worker/server; -1 = builder default
  int tiers = 2;
  int leaf_down_ports = 0;
  double oversubscription = 1.0;
  int optimizer_nics = 1;
  int optimizer_ssds = 4;
  int parameter_servers = 0;
  int racks = 1;          // luwu-star racks
  int trunks_per_rack = 1;  // luwu-star: links per rack trunk
  int pods = 1;             // luwu-star: pod switches over the racks
  int trunks_per_pod = 1;   // luwu-star: links per pod trunk
  int optimizer_nodes = 1;  // luwu-star
  int groups = 2;         // wan: groups (datacenters); --servers is then servers per group
  std::string wan_bandwidth;  // wan: each group's wide-area link, e.g. 10Gb/s (required)
  double wan_latency_ms = 0;  // wan: one way, group to group
  std::string network, gpu, nic, switch_profile, pcie, host, ssd, nvlink, optimizer_nic, optimizer_host, optimizer_ssd;
};

template <typename P>
void apply_common(P& p, const BuildOptions& o) {
  if (!o.gpu.empty()) p.gpu_profile = o.gpu;
  if (!o.nic.empty()) p.nic_profile = o.nic;
  if (!o.switch_profile.empty()) p.switch_profile = o.switch_profile;
  if (!o.pcie.empty()) p.pcie_profile = o.pcie;
  if (!o.host.empty()) p.host_profile = o.host;
  if (!o.ssd.empty()) p.ssd_profile = o.ssd;
  if (!o.network.empty())
    p.network_Bps = luwu::cli::quantity_flag("--network", o.network, luwu::units::Dim::BytesPerSecond, "100Gb/s");
}

template <typename P>
void apply_servers(P& p, const BuildOptions& o) {
  apply_common(p, o);
  if (o.servers > 0) p.servers = o.servers;
  if (o.gpus_per_server > 0) p.gpus_per_server = o.gpus_per_server;
  p.gpus_per_nic = o.gpus_per_nic;
  p.gpus_per_pcie_switch = o.gpus_per_pcie_switch;
  if (o.nvme >= 0) p.nvme_per_server = o.nvme;
  if (!o.nvlink.empty()) p.nvlink_profile = o.nvlink;
}

Topology build_luwu_star_from(const BuildOptions& o) {
  LuwuStarParams p;
  apply_common(p, o);
  p.workers = o.workers;
  p.optimizer_nics = o.optimizer_nics;
  p.optimizer_ssds = o.optimizer_ssds;
  p.parameter_servers = o.parameter_servers;
  p.racks = o.racks;
  p.trunks_per_rack = o.trunks_per_rack;
  p.pods = o.pods;
  p.trunks_per_pod = o.trunks_per_pod;
  p.optimizer_nodes = o.optimizer_nodes;
  if (o.gpus_per_server > 0) p.gpus_per_server = o.gpus_per_server;
  if (!o.nvlink.empty()) p.nvlink_profile = o.nvlink;
  if (o.nvme >= 0) p.nvme_per_worker = o.nvme;
  if (!o.optimizer_nic.empty()) p.optimizer_nic_profile = o.optimizer_nic;
  if (!o.optimizer_host.empty()) p.optimizer_host_profile = o.optimizer_host;
  if (!o.optimizer_ssd.empty()) p.optimizer_ssd_profile = o.optimizer_ssd;
  return build_luwu_star(p);
}

Topology build_dgx_from(const BuildOptions& o) {
  DgxParams p;
  apply_servers(p, o);
  return build_dgx(p);
}

Topology build_fat_tree_from(const BuildOptions& o) {
  FatTreeParams p;
  apply_servers(p, o);
  p.tiers = o.tiers;
  p.leaf_down_ports = o.leaf_down_ports;
  p.oversubscription = o.oversubscription;
  return build_fat_tree(p);
}

Topology build_wan_from(const BuildOptions& o) {
  WanParams p;
  apply_common(p, o);
  p.groups = o.groups;
  if (o.servers > 0) p.servers_per_group = o.servers;
  if (o.gpus_per_server > 0) p.gpus_per_server = o.gpus_per_server;
  p.gpus_per_nic = o.gpus_per_nic;
  p.gpus_per_pcie_switch = o.gpus_per_pcie_switch;
  if (o.nvme >= 0) p.nvme_per_server = o.nvme;
  if (!o.nvlink.empty()) p.nvlink_profile = o.nvlink;
  if (o.wan_bandwidth.empty()) throw std::invalid_argument("--kind wan needs --wan-bandwidth (e.g. 10Gb/s)");
  p.wan_Bps = luwu::cli::quantity_flag("--wan-bandwidth", o.wan_bandwidth, luwu::units::Dim::BytesPerSecond, "10Gb/s");
  p.wan_latency_s = o.wan_latency_ms * 1e-3;
  return build_wan(p);
}

// std::invalid_argument for an unknown --kind, naming the nearest one.
Topology build(const BuildOptions& o) {
  using Build = Topology (*)(const BuildOptions&);
  const Build build_kind = luwu::choose<Build>(
      o.kind, {{"luwu-star", build_luwu_star_from}, {"dgx", build_dgx_from}, {"fat-tree", build_fat_tree_from},
               {"wan", build_wan_from}},
      "topology kind");
  return build_kind(o);
}

const bool registered = luwu::cli::register_command(
    "topo", "build, show and draw cluster topologies", [](CLI::App& app) -> std::function<int()> {
      app.require_subcommand(1);
      auto b = std::make_shared<BuildOptions>();
      CLI::App* build_cmd = app.add_subcommand("build", "build a topology with one of the builders and save it as JSON");
      build_cmd->add_option("--kind", b->kind, "luwu-star, dgx, fat-tree or wan")->capture_default_str();
      build_cmd->add_option("-o,--output", b->output, "output JSON file")->required();
      build_cmd->add_option("--workers", b->workers, "luwu-star: worker GPUs (each with its SmartNIC)")->capture_default_str();
      build_cmd->add_option("--servers", b->servers, "dgx/fat-tree: servers; wan: servers per group");
      build_cmd->add_option("--groups", b->groups, "wan: groups (datacenters)")->capture_default_str();
      build_cmd->add_option("--wan-bandwidth", b->wan_bandwidth, "wan: each group's wide-area link, e.g. 10Gb/s");
      build_cmd->add_option("--wan-latency-ms", b->wan_latency_ms, "wan: one-way latency group to group")
          ->capture_default_str();
      build_cmd->add_option("--gpus-per-server", b->gpus_per_server,
                            "GPUs per server over NVLink (default: dgx/fat-tree/wan 8, luwu-star 1)");
      build_cmd->add_option("--gpus-per-nic", b->gpus_per_nic, "dgx/fat-tree: 1 = a NIC per GPU")->capture_default_str();
      build_cmd->add_option("--gpus-per-pcie-switch", b->gpus_per_pcie_switch, "dgx/fat-tree")->capture_default_str();
      build_cmd->add_option("--nvme", b->nvme, "NVMe SSDs per worker/server");
      build_cmd->add_option("--tiers", b->tiers, "fat-tree: 2 (leaf-spine) or 3")->capture_default_str();
      build_cmd->add_option("--leaf-down-ports", b->leaf_down_ports, "fat-tree: NICs per leaf (0 = half the ports)");
      build_cmd->add_option("--oversubscription", b->oversubscription, "fat-tree: leaf down:up ratio")->capture_default_str();
      build_cmd->add_option("--optimizer-nics", b->optimizer_nics, "luwu-star: NICs of the optimizer node")->capture_default_str();
      build_cmd->add_option("--optimizer-ssds", b->optimizer_ssds, "luwu-star: SSDs of the optimizer node")->capture_default_str();
      build_cmd->add_option("--parameter-servers", b->parameter_servers,
                            "luwu-star: CPU machines ps<k> on the switch for dedicated parameter servers")
          ->capture_default_str();
      build_cmd->add_option("--racks", b->racks,
                            "luwu-star: top-of-rack switches the workers are split over, under the cluster switch")
          ->capture_default_str();
      build_cmd->add_option("--trunks-per-rack", b->trunks_per_rack,
                            "luwu-star with --racks > 1: links (of the trunk rate) in each rack's trunk to the cluster "
                            "switch, modelled as one link of their summed bandwidth")
          ->capture_default_str();
      build_cmd->add_option("--pods", b->pods,
                            "luwu-star with --racks > 1: pod switches the racks are split over (a third level), each "
                            "trunked to the cluster switch")
          ->capture_default_str();
      build_cmd->add_option("--trunks-per-pod", b->trunks_per_pod,
                            "luwu-star with --pods > 1: links (of the trunk rate) in each pod's trunk to the cluster "
                            "switch, modelled as one link of their summed bandwidth")
          ->capture_default_str();
      build_cmd->add_option("--optimizer-nodes", b->optimizer_nodes,
                            "luwu-star: in-network optimizer nodes (optnode, optnode1, ...), each with its NICs and SSDs; "
                            "pipeline stage p uses node p mod this")
          ->capture_default_str();
      build_cmd->add_option("--network", b->network, "NIC line rate, e.g. 100Gb/s (default: the NIC profile's)");
      build_cmd->add_option("--gpu", b->gpu, "GPU profile");
      build_cmd->add_option("--nic", b->nic, "NIC or SmartNIC profile");
      build_cmd->add_option("--switch", b->switch_profile, "network switch profile");
      build_cmd->add_option("--pcie", b->pcie, "PCIe profile");
      build_cmd->add_option("--host", b->host, "host (CPU + DRAM) profile");
      build_cmd->add_option("--ssd", b->ssd, "SSD profile");
      build_cmd->add_option("--nvlink", b->nvlink, "dgx/fat-tree: NVLink/NVSwitch profile");
      build_cmd->add_option("--optimizer-nic", b->optimizer_nic, "luwu-star: optimizer node NIC profile");
      build_cmd->add_option("--optimizer-host", b->optimizer_host, "luwu-star: optimizer node host profile (default: --host)");
      build_cmd->add_option("--optimizer-ssd", b->optimizer_ssd, "luwu-star: optimizer node SSD profile (default: --ssd)");

      auto show_file = std::make_shared<std::string>();
      auto show_json = std::make_shared<bool>(false);
      CLI::App* show_cmd = app.add_subcommand("show", "counts of vertices and links by kind, link speeds, route lengths");
      show_cmd->add_option("file", *show_file, "topology JSON file")->required();
      show_cmd->add_flag("--json", *show_json, "print the summary as JSON");

      auto dot_file = std::make_shared<std::string>();
      auto dot_out = std::make_shared<std::string>();
      CLI::App* dot_cmd = app.add_subcommand("dot", "write a GraphViz drawing (and a PNG when `dot` is installed)");
      dot_cmd->add_option("file", *dot_file, "topology JSON file")->required();
      dot_cmd->add_option("-o,--output", *dot_out, "output .dot file")->required();
      auto dot_full = std::make_shared<bool>(false);
      dot_cmd->add_flag("--full", *dot_full, "draw every server (past 8 servers only the first 2 are drawn whole)");

      return [=]() -> int {
        if (build_cmd->parsed()) {
          Topology t = build(*b);
          validate_topology(t, b->output);
          save_topology(t, b->output);
          std::cerr << "wrote " << b->output << " (" << t.vertex_count() << " vertices, " << t.link_count() << " links)\n";
          return 0;
        }
        if (show_cmd->parsed()) {
          luwu::Json s = topology_summary(load_topology(*show_file));
          std::cout << (*show_json ? s.dump(2) + "\n" : format_summary(s));
          return 0;
        }
        if (dot_cmd->parsed()) {
          Topology t = load_topology(*dot_file);
          luwu::topologies::DotOptions options;
          options.full = *dot_full;
          luwu::write_file_atomically(*dot_out, to_dot(t, options));
          std::cerr << "wrote " << *dot_out << "\n";
          if (std::system("command -v dot >/dev/null 2>&1") == 0) {
            std::string png = *dot_out;
            if (png.size() > 4 && png.substr(png.size() - 4) == ".dot") png.resize(png.size() - 4);
            png += ".png";
            // Rendered to memory and written as every output is (a fresh temporary, renamed).
            if (auto image = output_of({"dot", "-Tpng", *dot_out})) {
              luwu::write_file_atomically(png, *image);
              std::cerr << "wrote " << png << "\n";
            } else {
              std::cerr << "warning: graphviz could not render " << png << "\n";
            }
          }
          return 0;
        }
        return 2;
      };
    });

}  // namespace
