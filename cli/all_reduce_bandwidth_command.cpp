// luwusim all-reduce-bandwidth SCENARIO.json: the LuWu paper's microbenchmark on the scenario's
// cluster: the algorithm bandwidth of one all-reduce by NCCL's kernels and by LuWu's push/pull,
// alone and beside a GEMM, for each worker count (sim/experiment/all_reduce_bandwidth.hpp).
#include <iostream>
#include <memory>

#include <fmt/format.h>

#include "cli/command_registry.hpp"
#include "cli/quantity_flag.hpp"
#include "common/choice.hpp"
#include "common/units.hpp"
#include "sim/experiment/all_reduce_bandwidth.hpp"
#include "sim/experiment/scenario.hpp"

namespace {

struct BandwidthArgs {
  std::string scenario;
  std::vector<int> workers;
  std::string bytes = "1GB";
  std::vector<std::string> mechanisms = {"nccl", "push-pull"};
  std::string nccl_path = "auto";
  bool json = false;
  bool csv = false;
};

std::string table(const std::vector<luwu::sim::AllReduceBandwidth>& points) {
  std::string out = fmt::format("{:<22} {:>7} {:>10} {:>14} {:>16} {:>8}\n", "mechanism", "workers", "buffer",
                                "algbw alone", "beside a GEMM", "change");
  for (std::size_t i = 0; i + 1 < points.size(); i += 2) {
    const auto& alone = points[i];
    const auto& gemm = points[i + 1];
    if (!alone.problem.empty()) {
      out += fmt::format("{:<22} {:>7} {}\n", alone.mechanism, alone.workers, alone.problem);
      continue;
    }
    out += fmt::format("{:<22} {:>7} {:>10} {:>14} {:>16} {:>7.1f}%\n", alone.mechanism, alone.workers,
                       luwu::units::bytes(alone.buffer_bytes), luwu::units::rate(alone.algbw_Bps),
                       luwu::units::rate(gemm.algbw_Bps), 100 * (gemm.algbw_Bps / alone.algbw_Bps - 1));
  }
  return out + "algbw = buffer bytes / time of one all-reduce; GPUs' SMs partitioned by MPS, as the paper measured.\n";
}

const bool registered = luwu::cli::register_command(
    "all-reduce-bandwidth",
    "Algorithm bandwidth of one all-reduce by NCCL kernels or LuWu's push/pull, alone and beside a GEMM",
    [](CLI::App& app) {
      auto a = std::make_shared<BandwidthArgs>();
      app.add_option("scenario", a->scenario, "Scenario JSON file: its cluster and training dtype")->required();
      // Lists take commas or spaces, as every list option of luwusim (--workers 2,4,8 or 2 4 8).
      app.add_option("--workers", a->workers,
                     "Worker counts (cluster.workers), e.g. --workers 2,4,8 or 2 4 8; default the scenario's")
          ->delimiter(',')
          ->check(CLI::PositiveNumber);
      app.add_option("--bytes", a->bytes, "All-reduce buffer size with its unit (default 1GB)");
      app.add_option("--mechanism", a->mechanisms,
                     "nccl, push-pull or push-pull-gpu-kernel (a list, e.g. nccl,push-pull; default nccl and push-pull)")
          ->delimiter(',');
      app.add_option("--gpu-direct-rdma", a->nccl_path,
                     "NCCL's network path: auto (NCCL's rule on the topology), on, or off (through host memory, at "
                     "the host profile's nccl_host_staged_bandwidth)")
          ->capture_default_str();
      auto* json = app.add_flag("--json", a->json, "Print the points as a JSON array");
      app.add_flag("--csv", a->csv, "Print one CSV row per point")->excludes(json);
      return [a]() -> int {
        const double bytes = luwu::cli::quantity_flag("--bytes", a->bytes, luwu::units::Dim::Bytes, "1GB or 256MiB");
        if (bytes <= 0) throw std::invalid_argument("--bytes: expected a positive size");
        std::vector<luwu::sim::AllReduceMechanism> mechanisms;
        for (const auto& m : a->mechanisms) mechanisms.push_back(luwu::choose(m, luwu::sim::all_reduce_mechanisms(), "--mechanism"));
        const auto nccl_path = luwu::choose(
            a->nccl_path,
            luwu::Choices<luwu::sim::GpuDirectRdma>{{"auto", luwu::sim::GpuDirectRdma::Auto},
                                                    {"on", luwu::sim::GpuDirectRdma::On},
                                                    {"off", luwu::sim::GpuDirectRdma::Off}},
            "--gpu-direct-rdma");
        luwu::Json base = luwu::load_json_file(a->scenario);
        std::vector<int> workers = a->workers;
        if (workers.empty()) workers.push_back(-1);  // the scenario's own
        std::vector<luwu::sim::AllReduceBandwidth> points;
        for (auto mechanism : mechanisms)
          for (int w : workers) {
            luwu::Json j = base;
            if (w > 0) j["cluster"]["workers"] = w;
            const auto scenario = luwu::sim::scenario_from_json(luwu::JsonNode(j, a->scenario));
            for (bool gemm : {false, true}) {
              std::cerr << fmt::format("[{}/{}] {} on {} workers{}", points.size() + 1,
                                       2 * mechanisms.size() * workers.size(), a->mechanisms[points.size() / (2 * workers.size())],
                                       scenario.topology.gpus().size(), gemm ? " beside a GEMM" : "")
                        << std::endl;
              points.push_back(luwu::sim::measure_all_reduce_bandwidth(scenario.topology, scenario.hardware,
                                                                        scenario.training, mechanism, bytes, gemm,
                                                                        nccl_path));
            }
          }
        if (a->json) {
          luwu::Json out = luwu::Json::array();
          for (const auto& p : points) out.push_back(luwu::sim::all_reduce_bandwidth_to_json(p));
          std::cout << out.dump(2) << "\n";
        } else if (a->csv) {
          std::cout << luwu::sim::all_reduce_bandwidth_csv_header();
          for (const auto& p : points) std::cout << luwu::sim::all_reduce_bandwidth_csv_row(p);
        } else {
          std::cout << table(points);
        }
        return 0;
      };
    });

}  // namespace
