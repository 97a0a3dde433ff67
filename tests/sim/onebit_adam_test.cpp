// 1-bit Adam (sim/systems/onebit_adam) in closed form: the warm-up stage is DDP's iteration, the
// compression stage sends 2 (N-1)/N x P/8 bytes per rank (one bit per parameter, scattered to
// its server chunk and gathered back), 16x less than the warm-up's fp16 all-reduce, and each GPU
// keeps two fp32 error-feedback buffers beside DDP's replica.
#include <doctest/doctest.h>

#include "sim/experiment/simulate.hpp"
#include "tests/sim/sim_test_support.hpp"

using namespace luwu;
using namespace sim_test;

TEST_CASE("1-bit Adam: the warm-up is DDP, the compressed stage sends 2 (N-1)/N x P/8 bytes per rank") {
  const int n = 4;
  const auto topo = star(n);
  const auto hw = quiet_hardware(topo);
  const std::uint64_t params = 8'000'000;
  const auto trace = synthetic_trace(3, params, 1e12);
  const double p = 3.0 * params;
  auto ddp = sim::simulate_system(trace, topo, hw, *make_system("ddp"), {});
  auto warmup = sim::simulate_system(trace, topo, hw, *make_system("onebit-adam", {{"stage", "warmup"}}), {});
  auto compressed = sim::simulate_system(trace, topo, hw, *make_system("onebit-adam"), {});
  REQUIRE(compressed.feasible);
  CHECK(warmup.iteration_time_s == ddp.iteration_time_s);
  CHECK(warmup.sent_bytes_per_worker == ddp.sent_bytes_per_worker);
  // The premise: DDP's ring all-reduce sends 2 (N-1)/N of the fp16 gradient.
  CHECK(ddp.sent_bytes_per_worker == doctest::Approx(2.0 * (n - 1) / n * 2 * p).epsilon(1e-9));
  CHECK(compressed.sent_bytes_per_worker == doctest::Approx(2.0 * (n - 1) / n * p / 8).epsilon(1e-9));
  CHECK(compressed.received_bytes_per_worker == doctest::Approx(2.0 * (n - 1) / n * p / 8).epsilon(1e-9));
  CHECK(ddp.sent_bytes_per_worker / compressed.sent_bytes_per_worker == doctest::Approx(16).epsilon(1e-9));
}

TEST_CASE("1-bit Adam: DDP's replica plus the worker's and its server chunk's fp32 error buffers") {
  const auto trace = gpt3_125m_trace();
  const auto p = trace.total_params();
  const auto ddp = make_system("ddp")->memory_footprint(trace, 8, 40e9);
  const auto onebit = make_system("onebit-adam")->memory_footprint(trace, 8, 40e9);
  CHECK(onebit.gpu_optimizer_bytes - ddp.gpu_optimizer_bytes == 4 * p + 4 * ((p + 7) / 8));
  CHECK(onebit.gpu_params_bytes == ddp.gpu_params_bytes);
  CHECK(system_settings_error("onebit-adam", {{"stage", "frozen"}}).find("stage") != std::string::npos);
  CHECK(system_settings_error("onebit-adam", {{"codec_hbm_bytes_per_param", -1}}).find("codec_hbm_bytes_per_param") != std::string::npos);
}
