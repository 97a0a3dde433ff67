// `luwusim profiles list|show`, run as a user would.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <unistd.h>

#include "tests/cli/run_command.hpp"

namespace {
bool has(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

const char* kBadProfile = R"({
  "name": "bad-nic", "kind": "nic", "description": "a NIC with a negative line rate",
  "fields": {
    "line_rate": {"value": -100, "unit": "Gb/s", "source": "test"},
    "mtu": {"value": 4096, "unit": "B", "source": "test"},
    "header_overhead": {"value": 82, "unit": "B", "source": "test"},
    "latency": {"value": 1, "unit": "us", "source": "test"}
  }})";
}  // namespace

TEST_CASE("profiles list: every shipped profile, sorted, with kind and description") {
  auto r = run_luwusim("profiles list");
  REQUIRE(r.exit_code == 0);
  std::istringstream lines(r.out);
  std::string line;
  std::getline(lines, line);  // header
  CHECK(has(line, "name"));
  CHECK(has(line, "kind"));
  std::vector<std::string> names;
  while (std::getline(lines, line))
    if (!line.empty()) names.push_back(line.substr(0, line.find(' ')));
  CHECK(names.size() >= 20);
  CHECK(std::is_sorted(names.begin(), names.end()));
  CHECK(has(r.out, "a100-40gb-sxm"));
  CHECK(has(r.out, "tofino2"));
  CHECK(has(r.out, "smartnic"));
}

TEST_CASE("profiles list --json is a sorted array") {
  auto r = run_luwusim("profiles list --json");
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  REQUIRE(j.is_array());
  CHECK(j.size() >= 20);
  for (std::size_t i = 1; i < j.size(); ++i) CHECK(j[i - 1]["name"].get<std::string>() < j[i]["name"].get<std::string>());
}

TEST_CASE("profiles show: values with units, base units and sources") {
  auto r = run_luwusim("profiles show a100-40gb-sxm");
  REQUIRE(r.exit_code == 0);
  CHECK(has(r.out, "312 TFLOP/s"));
  CHECK(has(r.out, "3.12e+14 FLOP/s"));
  CHECK(has(r.out, "1555 GB/s"));
  CHECK(has(r.out, "mamf-finder"));       // a source: the measured matmul rate
  CHECK(has(r.out, "[assumption]"));      // interference is marked as one
}

TEST_CASE("profiles show --json: base-unit values, units, sources, derived numbers") {
  auto r = run_luwusim("profiles show pcie-gen4-x16 --json");
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  CHECK(j["kind"] == "pcie");
  CHECK(j["fields"]["transfer_rate_per_lane"]["value"].get<double>() == doctest::Approx(16e9));
  CHECK(j["fields"]["transfer_rate_per_lane"]["unit"] == "Hz");
  CHECK_FALSE(j["fields"]["lanes"]["source"].get<std::string>().empty());
  // 16 GT/s x 16 lanes x 128/130 / 8 = 31.51 GB/s raw per direction.
  CHECK(j["derived"]["raw_bandwidth_per_direction"]["value"].get<double>() ==
        doctest::Approx(16e9 * 16 * 128 / 130 / 8));
}

TEST_CASE("profiles show of a bad profile file exits 2 naming the file and JSON path") {
  const std::string path = "models-cli-bad-nic.json";
  { std::ofstream(path) << kBadProfile; }
  auto r = run_luwusim("profiles show " + path);
  std::remove(path.c_str());
  CHECK(r.exit_code == 2);
  CHECK(has(r.err, path));
  CHECK(has(r.err, "$.fields.line_rate.value"));
  CHECK(r.out.empty());
}

TEST_CASE("profiles show of an unknown name exits 2 with a suggestion") {
  auto r = run_luwusim("profiles show tofino3");
  CHECK(r.exit_code == 2);
  CHECK(has(r.err, "did you mean"));
}

TEST_CASE("profiles list with a bad profile in the profile directory exits 2 naming it") {
  const std::string dir = "models-cli-profile-dir";
  std::filesystem::create_directories(dir);
  { std::ofstream(dir + "/bad-nic.json") << kBadProfile; }
  ::setenv("LUWUSIM_PROFILE_DIR", dir.c_str(), 1);
  auto r = run_luwusim("profiles list");
  ::unsetenv("LUWUSIM_PROFILE_DIR");
  std::filesystem::remove_all(dir);
  CHECK(r.exit_code == 2);
  CHECK(has(r.err, "bad-nic.json"));
  CHECK(has(r.err, "$.fields.line_rate.value"));
}

TEST_CASE("calibrate-gpu --block-json: the H100's profiled masked fills give back its profile's broadcast share") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("luwusim-calibrate-broadcast-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string out = (dir / "h100-mine.json").string();
  const std::string block = std::string(LUWUSIM_SOURCE_DIR) + "/validation/measured/h100-sxm-2026-11-27/block.json";
  auto r = run_luwusim("calibrate-gpu --profile h100-80gb-sxm --block-json " + block + " -o " + out + " --json");
  REQUIRE(r.exit_code == 0);
  const auto fit = nlohmann::json::parse(r.out)["broadcast"];
  // Four masked fills (two unfused blocks, forward and backward), each 2 x 2 b a s^2 + s^2 bytes:
  // 1.20-1.39 TB/s of 3.35; their median is the profile's 0.393.
  CHECK(fit["kernels"] == 4);
  CHECK(fit["broadcast_hbm_efficiency"].get<double>() == doctest::Approx(0.393).epsilon(0.002));
  CHECK(fit["share_min"].get<double>() == doctest::Approx(0.357).epsilon(0.003));
  const auto profile = nlohmann::json::parse(read_whole_file(out));
  CHECK(profile["fields"]["broadcast_hbm_efficiency"]["source"].get<std::string>().find("block.json") != std::string::npos);
  // A bench run without an unfused case has nothing to fit; a masked fill faster than HBM is refused.
  std::ofstream(dir / "fused.json") << R"({"cases": [{"name": "x", "fused": true, "micro_batch": 1, "heads": 1,
    "seq": 16, "top_kernels": []}]})";
  auto fused = run_luwusim("calibrate-gpu --profile h100-80gb-sxm --block-json " + (dir / "fused.json").string() + " -o " + out);
  CHECK(fused.exit_code == 2);
  CHECK(has(fused.err, "fused.json"));
  CHECK(has(fused.err, "no profiled masked fill"));
  std::ofstream(dir / "fast.json") << R"({"cases": [{"name": "x", "fused": false, "micro_batch": 8, "heads": 32,
    "seq": 2048, "top_kernels": [{"name": "void at::native::elementwise_kernel<128, 4, masked_fill", "s": 1e-3}]}]})";
  auto fast = run_luwusim("calibrate-gpu --profile h100-80gb-sxm --block-json " + (dir / "fast.json").string() + " -o " + out);
  CHECK(fast.exit_code == 2);
  CHECK(has(fast.err, "above"));
  fs::remove_all(dir);
}

TEST_CASE("calibrate-gpu --rates-json: the H100's measured copy and reductions give back its profile's HBM shares") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("luwusim-calibrate-hbm-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string out = (dir / "h100-mine.json").string();
  const std::string rates = std::string(LUWUSIM_SOURCE_DIR) + "/validation/measured/h100-sxm-2026-11-27/rates.json";
  auto r = run_luwusim("calibrate-gpu --profile h100-80gb-sxm --rates-json " + rates + " -o " + out + " --json");
  REQUIRE(r.exit_code == 0);
  const auto hbm = nlohmann::json::parse(r.out)["hbm"];
  // The copy: 3.026 TB/s of 3.35; the ten norms and softmaxes' median: the profile's 0.467.
  CHECK(hbm["hbm_efficiency"].get<double>() == doctest::Approx(0.903).epsilon(0.001));
  CHECK(hbm["row_reduction_hbm_efficiency"].get<double>() == doctest::Approx(0.467).epsilon(0.002));
  CHECK(hbm["reductions"] == 10);
  const auto profile = nlohmann::json::parse(read_whole_file(out));
  CHECK(profile["fields"]["row_reduction_hbm_efficiency"]["source"].get<std::string>().find("rates.json") != std::string::npos);
  CHECK(run_luwusim("profiles show " + out).exit_code == 0);
  // A copy faster than the datasheet (a cache, not HBM) is refused at the file; so is asking for nothing.
  std::ofstream(dir / "fast.json") << R"({"hbm_bytes_per_s": {"copy": 4e12},
    "elementwise": {"x": {"softmax_fwd": {"bytes": 1e9, "seconds": 1e-3}}}})";
  auto fast = run_luwusim("calibrate-gpu --profile h100-80gb-sxm --rates-json " + (dir / "fast.json").string() + " -o " + out);
  CHECK(fast.exit_code == 2);
  CHECK(has(fast.err, "fast.json"));
  CHECK(has(fast.err, "above"));
  std::ofstream(dir / "none.json") << R"({"hbm_bytes_per_s": {"copy": 3e12}, "elementwise": {}})";
  auto none = run_luwusim("calibrate-gpu --profile h100-80gb-sxm --rates-json " + (dir / "none.json").string() + " -o " + out);
  CHECK(none.exit_code == 2);
  CHECK(has(none.err, "no layer_norm_fwd"));
  CHECK(run_luwusim("calibrate-gpu --profile h100-80gb-sxm -o " + out).exit_code == 2);
  fs::remove_all(dir);
}

TEST_CASE("calibrate-gpu: the written profile carries the median share (--fit max: the fastest), a dtype column keeps its rows, a bad file is exit 2") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("luwusim-calibrate-gpu-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  // mamf-finder's A100 PCIe best (2048 x 5120 x 6144 at 252.9 TFLOP/s) measured at 230, a slower
  // square, and an fp32 row (a rate above the bf16 peak, were it read as bf16) the dtype column leaves out.
  std::ofstream(dir / "rates.csv") << "# measured on an A100 PCIe\nm,n,k,dtype,tflops\n2048,5120,6144,bf16,230\n"
                                      "4096,4096,4096,bf16,210.5\n8192,8192,8192,fp32,400\n";
  const std::string out = (dir / "a100-mine.json").string();
  auto r = run_luwusim("calibrate-gpu --profile a100-40gb-pcie --gemm-csv " + (dir / "rates.csv").string() + " -o " + out +
                       " --name a100-mine --json");
  REQUIRE(r.exit_code == 0);
  const auto fit = nlohmann::json::parse(r.out);
  // 640 tiles of 128 x 128 on 108 SMs fill 6 waves at 640 / 648, 1024 tiles 10 waves at 1024 / 1080:
  // the shares are 230 / 312 / (640 / 648) and 210.5 / 312 / (1024 / 1080), their median the mean of the two.
  const double best = 230.0 / 312 / (640.0 / 648), square = 210.5 / 312 / (1024.0 / 1080);
  CHECK(fit["gemm_efficiency_max"].get<double>() == doctest::Approx((best + square) / 2).epsilon(1e-9));
  CHECK(fit["fitted_shapes"] == 2);
  CHECK(fit["rows_of_other_dtypes"] == 1);
  CHECK(fit["gemm_wave_quantization"] == true);  // with waves the two shapes are 2.4% off, without 4.4%
  auto max = run_luwusim("calibrate-gpu --profile a100-40gb-pcie --gemm-csv " + (dir / "rates.csv").string() + " -o " +
                         out + " --name a100-mine --fit max --json");
  REQUIRE(max.exit_code == 0);
  CHECK(nlohmann::json::parse(max.out)["gemm_efficiency_max"].get<double>() == doctest::Approx(best).epsilon(1e-9));
  CHECK(run_luwusim("calibrate-gpu --profile a100-40gb-pcie --gemm-csv " + (dir / "rates.csv").string() + " -o " + out +
                    " --fit mean").exit_code != 0);
  // The written profile loads and is the base with the fitted field, sourced to the measurements.
  auto shown = run_luwusim("profiles show " + out + " --json");
  REQUIRE(shown.exit_code == 0);
  const auto profile = nlohmann::json::parse(read_whole_file(out));
  CHECK(profile["name"] == "a100-mine");
  CHECK(profile["fields"]["gemm_efficiency_max"]["source"].get<std::string>().find("rates.csv") != std::string::npos);
  CHECK(profile["fields"]["sm_count"]["value"] == 108);
  // A missing column and a rate above the peak are bad input naming the file and line.
  std::ofstream(dir / "bad.csv") << "m,n,k,tflop\n1,2,3,4\n";
  auto bad = run_luwusim("calibrate-gpu --profile a100-40gb-pcie --gemm-csv " + (dir / "bad.csv").string() + " -o " + out);
  CHECK(bad.exit_code == 2);
  CHECK(has(bad.err, "bad.csv"));
  CHECK(has(bad.err, "tflops"));
  std::ofstream(dir / "fast.csv") << "m,n,k,tflops\n4096,4096,4096,400\n";
  auto fast = run_luwusim("calibrate-gpu --profile a100-40gb-pcie --gemm-csv " + (dir / "fast.csv").string() + " -o " + out);
  CHECK(fast.exit_code == 2);
  CHECK(has(fast.err, "line 2"));
  fs::remove_all(dir);
}
