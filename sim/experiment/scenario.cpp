#include "sim/experiment/scenario.hpp"

#include "sim/experiment/kernel_profile_check.hpp"

#include <algorithm>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "common/input_error.hpp"
#include "common/units.hpp"
#include "models/profile.hpp"
#include "sim/engine/hardware.hpp"
#include "sim/systems/registry.hpp"
#include "topologies/builders.hpp"
#include "topologies/json_format.hpp"
#include "topologies/validate.hpp"
#include "workloads/model_catalog.hpp"
#include "workloads/stage_trace.hpp"
#include "workloads/training_json.hpp"

namespace luwu::sim {
namespace {

// A line rate: "100Gb/s" (positive, at most 1 Pb/s), or a bare number of B/s of at least 1 Mb/s
// (below that a bare number is almost surely a unit slip, e.g. 7 for 7 B/s; a slow link on purpose
// says its unit: "1kb/s").
double rate_of(const JsonNode& node) {
  constexpr double kMinBareRate_Bps = 1e6 / 8, kMaxRate_Bps = 1e15 / 8;
  double v = 0;
  if (node.is_number()) {
    v = node.as_positive();
    if (v < kMinBareRate_Bps)
      node.fail(units::rate(v) + " as a bare number of B/s is below 1 Mb/s: give the rate with its unit, e.g. "
                                 "\"100Gb/s\"");
  } else {
    try {
      v = units::parse_quantity(node.as_string(), units::Dim::BytesPerSecond);
    } catch (const std::invalid_argument& e) {
      node.fail(e.what());
    }
    if (!(v > 0)) node.fail("expected a positive rate");
  }
  if (v > kMaxRate_Bps) node.fail(units::rate(v) + " is over 1 Pb/s");
  return v;
}

// SSDs on one host: a 2U server holds 24 to 32 NVMe drives; beyond 1024 a count only burns time.
constexpr int kMaxDisksPerHost = 1024;
// Leaf oversubscription beyond 64:1 leaves a fabric that no cluster is built as.
constexpr int kMaxOversubscription = 64;

int int_arg(const JsonNode& c, const std::string& key, int dflt, int lo = 1, int hi = 1 << 24) {
  return static_cast<int>(c.get_int(key, dflt, lo, hi));
}

bool is_shipped(const std::string& name) {
  const auto names = models::shipped_profile_names();
  return std::binary_search(names.begin(), names.end(), name);
}

// The kinds of profile a cluster role takes (the builders and specs require the same).
std::vector<std::string> role_kinds(const std::string& role) {
  namespace kinds = models::spec_kinds;
  if (role == "gpu") return kinds::gpu;
  if (role == "nic" || role == "optimizer_nic" || role == "parameter_server_nic") return kinds::nic;
  if (role == "host" || role == "optimizer_host" || role == "parameter_server_host") return kinds::host;
  if (role == "pcie") return kinds::pcie;
  if (role == "nvlink") return kinds::nvlink;
  if (role == "ssd" || role == "optimizer_ssd") return kinds::ssd;
  if (role == "switch") return kinds::network_switch;
  if (role == "cxl") return {"memory"};  // an expander: a memory profile, not a host's DRAM
  return {};
}

// "profiles": {"<role>": "<profile name>" | {inline profile}}.  An inline profile joins the
// catalog under its "name", which the role then refers to.
void profile_args(const JsonNode& c, const std::vector<std::pair<std::string, std::string*>>& roles,
                  models::ProfileCatalog& catalog) {
  if (!c.has("profiles")) return;
  JsonNode p = c.at("profiles");
  std::vector<std::string> known;
  for (auto& [role, target] : roles) known.push_back(role);
  p.only_keys(known);
  for (auto& [role, target] : roles) {
    if (!p.has(role)) continue;
    JsonNode entry = p.at(role);
    if (!entry.is_object()) {
      *target = entry.as_string();
      continue;
    }
    models::Profile profile = models::profile_from_json(entry);
    if (is_shipped(profile.name))
      entry.at("name").fail("an inline profile cannot reuse the shipped profile name \"" + profile.name +
                            "\": give it its own name, or change the shipped one's fields with \"overrides\"");
    if (const auto* same = catalog.find(profile.name); same && models::profile_to_json(*same) != models::profile_to_json(profile))
      entry.at("name").fail("another inline profile of this cluster is also named \"" + profile.name + "\"");
    *target = profile.name;
    catalog.add(std::move(profile));
  }
  // A role's named profile must exist: shipped, or inline in this cluster (checked once all the
  // inline ones are known, so that a role may name another role's).
  for (auto& [role, target] : roles) {
    if (!p.has(role) || p.at(role).is_object() || catalog.find(*target) || is_shipped(*target)) continue;
    try {
      models::find_profile(*target);  // a profile file's path
      continue;
    } catch (const InputError&) {
    }
    std::vector<std::string> known = models::shipped_profile_names();
    for (const auto& [name, profile] : catalog.profiles()) known.push_back(name);
    p.at(role).fail("unknown profile \"" + *target + "\"" + did_you_mean(*target, known) +
                    "; `luwusim profiles list` shows the shipped ones");
  }
  // And be of a kind the role takes: refused here, at the role, not in the profile's own file.
  for (auto& [role, target] : roles) {
    const auto kinds = role_kinds(role);
    if (!p.has(role) || kinds.empty()) continue;
    const std::string kind = catalog.resolve(*target).kind;
    if (std::find(kinds.begin(), kinds.end(), kind) != kinds.end()) continue;
    std::string expected;
    for (std::size_t i = 0; i < kinds.size(); ++i) expected += (i ? " or \"" : "\"") + kinds[i] + "\"";
    const JsonNode at = p.at(role).is_object() ? p.at(role).at("kind") : p.at(role);
    at.fail("profile \"" + *target + "\" is a " + kind + " profile; the " + role + " role takes a profile of kind " + expected);
  }
}

// "overrides": {"<profile name>": {"<field>": value, ...}, ...}: the named profile (inline, or
// shipped) with those fields replaced joins the catalog, so every use of the name sees them.
void apply_overrides(const JsonNode& c, models::ProfileCatalog& catalog) {
  if (!c.has("overrides")) return;
  JsonNode all = c.at("overrides");
  all.expect_object();
  for (const auto& name : all.keys()) {
    JsonNode fields = all.at(name);
    models::Profile profile;
    if (const auto* own = catalog.find(name)) {
      profile = *own;
    } else if (is_shipped(name)) {
      profile = models::find_profile(name);
    } else {
      std::vector<std::string> known = models::shipped_profile_names();
      for (const auto& [own_name, own_profile] : catalog.profiles()) known.push_back(own_name);
      const auto dot = name.rfind('.');
      if (dot != std::string::npos && std::find(known.begin(), known.end(), name.substr(0, dot)) != known.end())
        fields.fail("overrides are nested by profile: write {\"" + name.substr(0, dot) + "\": {\"" +
                    name.substr(dot + 1) + "\": ...}}");
      fields.fail("unknown profile \"" + name + "\"" + did_you_mean(name, known) +
                  "; overrides name a shipped profile (`luwusim profiles list`) or an inline one");
    }
    if (!fields.is_object()) fields.fail("expected an object {\"<field>\": value, ...} of the fields to override");
    for (const auto& field : fields.keys()) models::override_field(profile, field, fields.at(field));
    catalog.add(std::move(profile));
  }
}

// An override of a profile the cluster does not use changes nothing: almost surely a mistake
// (e.g. "tofino" for a dgx on "tofino2").
void check_overrides_used(const JsonNode& c, const topologies::Topology& topo) {
  if (!c.has("overrides")) return;
  std::set<std::string> used;
  for (auto [v, end] = boost::vertices(topo.graph); v != end; ++v) used.insert(topo[*v].profile);
  for (auto e : topo.edges()) used.insert(topo[e].profile);
  used.erase("");
  JsonNode all = c.at("overrides");
  for (const auto& name : all.keys()) {
    if (used.count(name)) continue;
    std::string list;
    for (const auto& u : used) list += (list.empty() ? "" : ", ") + u;
    all.at(name).fail("profile \"" + name + "\" is not used by this cluster (it uses " + list + ")");
  }
}

// Overrides apply, then the builder runs with the scenario's catalog: its profile names resolve
// to the inline and overridden profiles, and the topology keeps the catalog (Topology::profiles)
// for sim::hardware_of.
template <class Build>
topologies::Topology build_with_catalog(const JsonNode& c, models::ProfileCatalog& catalog, Build build) {
  apply_overrides(c, catalog);
  topologies::Topology topo = build(catalog);
  check_overrides_used(c, topo);
  return topo;
}

topologies::Topology build_luwu_star(const JsonNode& c, models::ProfileCatalog& catalog) {
  c.only_keys({"topology", "workers", "gpus_per_server", "network", "profiles", "optimizer_nics", "optimizer_ssds",
               "nvme_per_worker", "parameter_servers", "racks", "trunks_per_rack", "pods", "trunks_per_pod", "optimizer_nodes",
               "overrides"});
  topologies::LuwuStarParams p;
  p.workers = int_arg(c, "workers", p.workers);
  p.gpus_per_server = int_arg(c, "gpus_per_server", p.gpus_per_server, 1);
  p.racks = int_arg(c, "racks", p.racks, 1);
  p.trunks_per_rack = int_arg(c, "trunks_per_rack", p.trunks_per_rack, 1);
  if (p.trunks_per_rack > 1 && p.racks == 1)
    c.at("trunks_per_rack").fail("applies to the racks' trunks: set \"racks\" > 1 (one switch has no trunks)");
  p.pods = int_arg(c, "pods", p.pods, 1);
  if (p.pods > 1 && p.racks == 1)
    c.at("pods").fail("splits the racks over pod switches: set \"racks\" > 1");
  if (p.pods > p.racks) c.at("pods").fail(fmt::format("{} pods need at least as many racks (racks is {})", p.pods, p.racks));
  p.trunks_per_pod = int_arg(c, "trunks_per_pod", p.trunks_per_pod, 1);
  if (p.trunks_per_pod > 1 && p.pods == 1)
    c.at("trunks_per_pod").fail("applies to the pods' trunks: set \"pods\" > 1 (without pods there are none)");
  p.optimizer_nodes = int_arg(c, "optimizer_nodes", p.optimizer_nodes, 1);
  if (c.has("network")) p.network_Bps = rate_of(c.at("network"));
  p.optimizer_nics = int_arg(c, "optimizer_nics", p.optimizer_nics);
  p.optimizer_ssds = int_arg(c, "optimizer_ssds", p.optimizer_ssds, 0, kMaxDisksPerHost);
  p.nvme_per_worker = int_arg(c, "nvme_per_worker", p.nvme_per_worker, 0, kMaxDisksPerHost);
  p.parameter_servers = int_arg(c, "parameter_servers", p.parameter_servers, 0);
  profile_args(c, {{"gpu", &p.gpu_profile}, {"pcie", &p.pcie_profile}, {"nic", &p.nic_profile},
                   {"switch", &p.switch_profile}, {"host", &p.host_profile}, {"ssd", &p.ssd_profile},
                   {"nvlink", &p.nvlink_profile}, {"optimizer_nic", &p.optimizer_nic_profile}, {"optimizer_host", &p.optimizer_host_profile},
                   {"optimizer_ssd", &p.optimizer_ssd_profile},
                   {"parameter_server_host", &p.parameter_server_host_profile},
                   {"parameter_server_nic", &p.parameter_server_nic_profile}},
               catalog);
  return build_with_catalog(c, catalog, [&](const models::ProfileCatalog& profiles) {
    return topologies::build_luwu_star(p, profiles);
  });
}

// The arguments of builders of multi-GPU servers (dgx, fat-tree): the servers, their GPUs, NICs,
// PCIe switches and NVMe, the line rate and the profiles by role.
template <class ServerParams>
void server_args(const JsonNode& c, ServerParams& p, models::ProfileCatalog& catalog) {
  p.servers = int_arg(c, "servers", p.servers);
  p.gpus_per_server = int_arg(c, "gpus_per_server", p.gpus_per_server);
  p.gpus_per_nic = int_arg(c, "gpus_per_nic", p.gpus_per_nic);
  p.gpus_per_pcie_switch = int_arg(c, "gpus_per_pcie_switch", p.gpus_per_pcie_switch);
  p.nvme_per_server = int_arg(c, "nvme_per_server", p.nvme_per_server, 0, kMaxDisksPerHost);
  p.cxl_per_server = int_arg(c, "cxl_per_server", p.cxl_per_server, 0, kMaxDisksPerHost);
  if (c.has("network")) p.network_Bps = rate_of(c.at("network"));
  profile_args(c, {{"gpu", &p.gpu_profile}, {"nvlink", &p.nvlink_profile}, {"pcie", &p.pcie_profile},
                   {"nic", &p.nic_profile}, {"switch", &p.switch_profile}, {"host", &p.host_profile},
                   {"ssd", &p.ssd_profile}, {"cxl", &p.cxl_profile}},
               catalog);
}

topologies::Topology build_dgx(const JsonNode& c, models::ProfileCatalog& catalog) {
  c.only_keys({"topology", "servers", "gpus_per_server", "gpus_per_nic", "gpus_per_pcie_switch", "nvme_per_server",
               "cxl_per_server", "network", "profiles", "overrides"});
  topologies::DgxParams p;
  server_args(c, p, catalog);
  return build_with_catalog(c, catalog, [&](const models::ProfileCatalog& profiles) {
    return topologies::build_dgx(p, profiles);
  });
}

topologies::Topology build_fat_tree(const JsonNode& c, models::ProfileCatalog& catalog) {
  c.only_keys({"topology", "servers", "gpus_per_server", "gpus_per_nic", "gpus_per_pcie_switch", "nvme_per_server",
               "cxl_per_server", "tiers", "leaf_down_ports", "oversubscription", "network", "profiles", "overrides"});
  topologies::FatTreeParams p;
  server_args(c, p, catalog);
  p.tiers = int_arg(c, "tiers", p.tiers, 2, 3);
  p.leaf_down_ports = int_arg(c, "leaf_down_ports", p.leaf_down_ports, 0);
  if (c.has("oversubscription")) {
    p.oversubscription = c.at("oversubscription").as_positive();
    if (p.oversubscription > kMaxOversubscription)
      c.at("oversubscription").fail("expected at most " + std::to_string(kMaxOversubscription) + ":1");
  }
  return build_with_catalog(c, catalog, [&](const models::ProfileCatalog& profiles) {
    return topologies::build_fat_tree(p, profiles);
  });
}

topologies::Topology build_wan(const JsonNode& c, models::ProfileCatalog& catalog) {
  c.only_keys({"topology", "groups", "servers_per_group", "gpus_per_server", "gpus_per_nic", "gpus_per_pcie_switch",
               "nvme_per_server", "network", "wan_bandwidth", "wan_latency_ms", "profiles", "overrides"});
  topologies::WanParams p;
  p.groups = int_arg(c, "groups", p.groups, 1);
  p.servers_per_group = int_arg(c, "servers_per_group", p.servers_per_group, 1);
  p.gpus_per_server = int_arg(c, "gpus_per_server", p.gpus_per_server);
  p.gpus_per_nic = int_arg(c, "gpus_per_nic", p.gpus_per_nic);
  p.gpus_per_pcie_switch = int_arg(c, "gpus_per_pcie_switch", p.gpus_per_pcie_switch);
  p.nvme_per_server = int_arg(c, "nvme_per_server", p.nvme_per_server, 0, kMaxDisksPerHost);
  if (c.has("network")) p.network_Bps = rate_of(c.at("network"));
  // No default: a wide-area link is the scenario's to state (a leased line, a cloud interconnect).
  p.wan_Bps = rate_of(c.at("wan_bandwidth"));
  if (c.has("wan_latency_ms")) {
    const double ms = c.at("wan_latency_ms").as_non_negative();
    if (!(ms >= 0) || ms > 1e4) c.at("wan_latency_ms").fail("expected a one-way latency of 0 to 10,000 ms");
    p.wan_latency_s = ms * 1e-3;
  }
  profile_args(c, {{"gpu", &p.gpu_profile}, {"nvlink", &p.nvlink_profile}, {"pcie", &p.pcie_profile},
                   {"nic", &p.nic_profile}, {"switch", &p.switch_profile}, {"host", &p.host_profile},
                   {"ssd", &p.ssd_profile}},
               catalog);
  return build_with_catalog(c, catalog, [&](const models::ProfileCatalog& profiles) {
    return topologies::build_wan(p, profiles);
  });
}

}  // namespace

topologies::Topology topology_from_cluster_json(const JsonNode& c, const std::string& scenario_dir) {
  c.expect_object();
  if (c.has("topology_file")) {
    c.only_keys({"topology_file", "overrides"});
    std::filesystem::path path = c.at("topology_file").as_string();
    if (path.is_relative() && !scenario_dir.empty()) path = std::filesystem::path(scenario_dir) / path;
    std::error_code error;  // refused at the field that names it, as a trace's or a profile's is
    if (!std::filesystem::exists(path, error)) c.at("topology_file").fail("no such file: " + path.string());
    auto topo = topologies::load_topology(path.string());
    topologies::validate_topology(topo, path.string());
    // The file's links carry their own numbers; overrides reach what the simulator reads from
    // profiles (sim/engine/hardware.hpp), on top of the profiles the file holds (Topology::profiles).
    apply_overrides(c, topo.profiles);
    check_overrides_used(c, topo);
    return topo;
  }
  using Builder = topologies::Topology (*)(const JsonNode&, models::ProfileCatalog&);
  const Builder build = c.at("topology").as_choice<Builder>(
      {{"luwu-star", build_luwu_star}, {"dgx", build_dgx}, {"fat-tree", build_fat_tree}, {"wan", build_wan}},
      "topology builder");
  // Builders reject impossible parameters with std::invalid_argument: report them at the cluster.
  try {
    models::ProfileCatalog catalog;
    topologies::Topology topo = build(c, catalog);
    topologies::validate_topology(topo, c.file());
    return topo;
  } catch (const std::invalid_argument& e) {
    c.fail(e.what());
  }
}

const Choices<ModeChoice>& mode_choices() {
  static const Choices<ModeChoice> choices = {
      {"auto", ModeChoice::Auto}, {"detailed", ModeChoice::Detailed}, {"coarse", ModeChoice::Coarse}};
  return choices;
}

CollectiveMode Scenario::collective_mode() const {
  if (mode == ModeChoice::Detailed) return CollectiveMode::Detailed;
  if (mode == ModeChoice::Coarse) return CollectiveMode::Coarse;
  return static_cast<int>(topology.gpus().size()) <= kDetailedMaxGpus ? CollectiveMode::Detailed
                                                                       : CollectiveMode::Coarse;
}

Scenario scenario_from_json(const JsonNode& root) {
  root.only_keys({"name", "description", "model", "training", "parallelism", "cluster", "systems", "simulation",
                  "prices", "trace", "kernel_times", "kernel_times_step", "kernel_times_other_gpu"});
  Scenario s;
  s.file = root.file();
  s.name = root.get_string("name", std::filesystem::path(root.file()).stem().string());
  s.description = root.get_string("description", "");
  const std::string dir = std::filesystem::path(root.file()).parent_path().string();
  auto input_file = [&](const JsonNode& node) {
    const std::filesystem::path p = node.as_string();
    const std::string path = p.is_absolute() || dir.empty() ? p.string() : (std::filesystem::path(dir) / p).string();
    if (!std::filesystem::exists(path)) node.fail("no such file: " + path);
    return path;
  };
  s.kernel_times_other_gpu = root.get_bool("kernel_times_other_gpu", false);
  workloads::KinetoOptions kineto;
  kineto.step = static_cast<int>(root.get_int("kernel_times_step", -1, 0, 1'000'000'000));
  if (!root.has("kernel_times"))
    for (const char* key : {"kernel_times_step", "kernel_times_other_gpu"})
      if (root.has(key)) root.at(key).fail("applies to a \"kernel_times\" profile, and the scenario names none");
  if (root.has("kernel_times")) use_kernel_times(s, input_file(root.at("kernel_times")), kineto);
  if (root.has("trace")) {
    for (const char* key : {"model", "training"})
      if (root.has(key))
        root.at(key).fail("a scenario with a \"trace\" takes its model and training settings from the trace: "
                          "remove \"" + std::string(key) + "\"");
    use_trace(s, input_file(root.at("trace")));
  }

  if (!root.has("trace")) {
    JsonNode model = root.at("model");
    if (model.is_string()) {
      const auto* m = workloads::find_catalog_model(model.as_string());
      if (!m)
        model.fail("unknown model \"" + model.as_string() + "\"" +
                   did_you_mean(model.as_string(), workloads::catalog_model_names()) +
                   "; `luwusim trace models` lists the catalog, or write the model as an object");
      s.model = *m;
    } else {
      s.model = workloads::model_from_json(model);
    }

    s.training = workloads::training_from_json(root.at("training"), s.model);
  }

  s.cluster = root.at("cluster").raw();
  s.topology = topology_from_cluster_json(root.at("cluster"), dir);
  // What the simulator cannot represent (mixed GPUs, servers of different sizes) is an error here,
  // at the cluster, not a surprise in the middle of a run.
  try {
    s.hardware = hardware_of(s.topology);
  } catch (const std::invalid_argument& e) {
    root.at("cluster").fail(e.what());
  }

  const int gpus = static_cast<int>(s.topology.gpus().size());
  s.layout.data = gpus;
  if (root.has("parallelism")) {
    const JsonNode layout = root.at("parallelism");
    if (root.has("trace"))
      layout.fail("a replayed trace is one GPU's; for tensor or pipeline parallelism write \"model\" and "
                  "\"training\" and luwusim generates each stage's trace");
    layout.expect_object();
    const bool data_given = layout.has("data");
    s.layout = workloads::layout_from_json(layout, s.model, s.training);
    const long long grid = static_cast<long long>(s.layout.tensor) * s.layout.pipeline;
    if (!data_given) {
      if (gpus % grid != 0)
        layout.fail(fmt::format("tensor {} x pipeline {} = {} GPUs per data-parallel replica does not divide the "
                                "cluster's {} GPUs",
                                s.layout.tensor, s.layout.pipeline, grid, gpus));
      s.layout.data = static_cast<int>(gpus / grid);
      if (auto p = workloads::layout_problem(s.model, s.training, s.layout))
        (layout.has(p->field) ? layout.at(p->field) : layout).fail(p->message + " (data derived from the cluster's GPUs)");
    } else if (s.layout.gpus() != gpus) {
      layout.at("data").fail(fmt::format("tensor {} x pipeline {} x data {} = {} GPUs, the cluster has {} (leave "
                                         "\"data\" out and it is derived)",
                                         s.layout.tensor, s.layout.pipeline, s.layout.data, s.layout.gpus(), gpus));
    }
  }

  JsonNode systems = root.at("systems");
  for (std::size_t i = 0; i < systems.size(); ++i) {
    s.systems.push_back(system_from_json(systems.at(i)));
    for (std::size_t j = 0; j < i; ++j)
      if (s.systems[j]->label() == s.systems[i]->label())
        systems.at(i).fail("label \"" + s.systems[i]->label() + "\" is also $.systems[" + std::to_string(j) +
                           "]'s: results name systems by label, give each entry its own (\"label\": ...)");
  }
  if (s.systems.empty()) systems.fail("expected at least one system");

  if (!root.has("prices")) {
    s.prices = models::find_price_list(models::kDefaultPriceList);
    s.prices_by_default = true;
  } else if (const JsonNode prices = root.at("prices"); prices.raw().is_boolean()) {
    if (prices.as_bool()) prices.fail("expected a price list's name or file, or false for none");
  } else {
    const std::string name = prices.as_string();
    const bool is_path = name.find('/') != std::string::npos || name.ends_with(".json");
    try {
      s.prices = models::find_price_list(is_path && !std::filesystem::path(name).is_absolute()
                                             ? (std::filesystem::path(dir) / name).string()
                                             : name);
    } catch (const InputError& e) {
      if (e.json_path().empty()) prices.fail(e.what());  // no such list: the scenario's field says so
      throw;
    }
  }

  if (root.has("simulation")) {
    JsonNode sim = root.at("simulation");
    sim.only_keys({"mode", "routing", "flow_splitting", "fold_data_parallel", "allow_inexact_fold"});
    if (sim.has("mode")) s.mode = sim.at("mode").as_choice(mode_choices(), "simulation mode");
    if (sim.has("routing"))
      s.routing = sim.at("routing").as_choice(
          Choices<topologies::RouteChoice>{{"ecmp", topologies::RouteChoice::EcmpHash},
                                           {"single-path", topologies::RouteChoice::Shortest},
                                           {"spray", topologies::RouteChoice::Spray}},
          "routing");
    if (sim.has("flow_splitting")) {
      // At most 64 sub-flows (the routes ECMP considers per pair, topologies/lowering.hpp).
      s.flow_splitting = static_cast<int>(sim.at("flow_splitting").as_int(1, 64));
      if (s.flow_splitting > 1 && s.routing != topologies::RouteChoice::EcmpHash)
        sim.at("flow_splitting").fail("flow splitting hashes each sub-flow onto its own route: it needs routing \"ecmp\"");
    }
    if (sim.has("fold_data_parallel")) {
      const JsonNode fold = sim.at("fold_data_parallel");
      s.fold_data_parallel = static_cast<int>(fold.as_int(2, 1 << 20));
      // At most K ranks of each group: a group of K or fewer runs whole (a sweep's small clusters).
      if (s.fold_data_parallel >= s.layout.data) s.fold_data_parallel = 0;  // nothing to fold
    }
    s.allow_inexact_fold = sim.get_bool("allow_inexact_fold", false);
  }
  return s;
}

void use_trace(Scenario& scenario, const std::string& file) {
  auto trace = std::make_shared<const workloads::Trace>(workloads::load_trace(file));
  // A stage trace is one stage's GPU: the other stages' traces are not in the file.  A scenario's
  // "parallelism" generates every stage's.
  if (!trace->layout.whole_model_per_gpu())
    throw std::invalid_argument(file + ": a tensor-, pipeline- or expert-parallel stage trace (tensor " +
                                std::to_string(trace->layout.tensor) + ", pipeline " +
                                std::to_string(trace->layout.pipeline) + ", expert " + std::to_string(trace->layout.expert) +
                                ") holds one stage; simulate the layout with a scenario's \"parallelism\" and its "
                                "\"model\" and \"training\", which generates every stage's trace");
  scenario.model = trace->model;
  scenario.training = trace->training;
  scenario.trace = std::move(trace);
  scenario.trace_file = file;
}

void use_kernel_times(Scenario& scenario, const std::string& file, const workloads::KinetoOptions& options) {
  scenario.kernel_times = std::make_shared<const workloads::KernelProfile>(workloads::load_kineto_profile(file, options));
}

workloads::KernelTimesReport apply_scenario_kernel_times(const Scenario& scenario, workloads::Trace& trace) {
  std::string scaled_from;
  const workloads::KernelProfile profile =
      profile_for_gpu(*scenario.kernel_times, scenario.hardware.gpu.name, scenario.hardware.gpu, trace.training.dtype,
                      scenario.kernel_times_other_gpu, &scaled_from);
  workloads::KernelTimesReport report = workloads::apply_kernel_times(trace, profile);
  report.scaled_from = scaled_from;
  check_measured_rates(trace, scenario.hardware.gpu, scenario.kernel_times->file);
  return report;
}

std::vector<workloads::Trace> scenario_stage_traces(const Scenario& scenario,
                                                   std::optional<workloads::KernelTimesReport>* report) {
  if (scenario.layout.whole_model_per_gpu()) return {scenario_trace(scenario, report)};
  std::vector<workloads::Trace> stages;
  for (int p = 0; p < scenario.layout.pipeline; ++p) {
    stages.push_back(workloads::generate_stage_trace(scenario.model, scenario.training, scenario.layout, p));
    if (scenario.kernel_times) {
      auto r = apply_scenario_kernel_times(scenario, stages.back());
      if (report && p == 0) *report = std::move(r);
    }
  }
  return stages;
}

workloads::Trace scenario_trace(const Scenario& scenario, std::optional<workloads::KernelTimesReport>* report) {
  workloads::Trace trace = scenario.trace ? *scenario.trace : workloads::generate_trace(scenario.model, scenario.training);
  if (scenario.kernel_times) {
    auto r = apply_scenario_kernel_times(scenario, trace);
    if (report) *report = std::move(r);
  }
  return trace;
}

Scenario load_scenario(const std::string& file) {
  Json j = load_json_file(file);
  return scenario_from_json(JsonNode(j, file));
}

}  // namespace luwu::sim
