// The CPU optimizer's memory traffic: where the gradient is widened, write-allocate on stores to
// unread lines, and the inter-socket (NUMA) limit.  Every expected value is counted by hand.
#include <doctest/doctest.h>

#include "common/input_error.hpp"
#include "common/json_input.hpp"
#include "models/models.hpp"

using namespace luwu::models;

namespace {

OptimizerPrecision converted(GradientConversion where) {
  OptimizerPrecision p;  // fp16 gradient, fp32 state, fp16 copy-out
  p.grad_conversion = where;
  return p;
}

HostSpec one_socket_host(double memory_Bps) {
  HostSpec h;
  h.name = "test-host";
  h.cpu = CpuSpec{16, memory_Bps, 1e15};  // compute never binds here
  h.dram = MemorySpec{256e9, memory_Bps, 1, 0};
  return h;
}

// A host profile as JSON with the given extra fields (value, unit) beside the required ones.
luwu::Json host_json(const luwu::Json& extra) {
  luwu::Json fields = {
      {"cores", {{"value", 24}, {"unit", "count"}, {"source", "test"}}},
      {"cpu_peak_fp32_flops", {{"value", 1}, {"unit", "TFLOP/s"}, {"source", "test"}}},
      {"dram_capacity", {{"value", 256}, {"unit", "GB"}, {"source", "test"}}},
      {"dram_theoretical_bandwidth", {{"value", 200}, {"unit", "GB/s"}, {"source", "test"}}},
      {"dram_stream_efficiency", {{"value", 1}, {"unit", "fraction"}, {"source", "test"}}},
  };
  for (auto it = extra.begin(); it != extra.end(); ++it) fields[it.key()] = it.value();
  return {{"name", "test-host"}, {"kind", "host"}, {"description", "test"}, {"fields", fields}};
}

luwu::Json field(double value, const std::string& unit) { return {{"value", value}, {"unit", unit}, {"source", "test"}}; }

}  // namespace

TEST_CASE("Adam's bytes per parameter, by where the gradient is widened to fp32") {
  // In the kernel: grad 2 + master, m, v 12 read; master, m, v 12 + fp16 copy 2 written; only the
  // copy goes to lines the step did not read.
  const OptimizerCost in_kernel = adam_mixed_precision_cost(converted(GradientConversion::in_kernel));
  CHECK(in_kernel.bytes_read_per_param == 2 + 12);
  CHECK(in_kernel.bytes_written_per_param == 12 + 2);
  CHECK(in_kernel.bytes_written_unread_per_param == 2);
  // On the GPU (DeepSpeed): the fp32 gradient is in host memory, the kernel reads 4 B of it.
  const OptimizerCost on_gpu = adam_mixed_precision_cost(converted(GradientConversion::on_gpu));
  CHECK(on_gpu.bytes_read_per_param == 4 + 12);
  CHECK(on_gpu.bytes_written_per_param == 12 + 2);
  CHECK(on_gpu.bytes_written_unread_per_param == 2);
  // A CPU pass: reads 2, writes 4 to a fresh buffer, which the kernel then reads.
  const OptimizerCost on_cpu = adam_mixed_precision_cost(converted(GradientConversion::on_cpu));
  CHECK(on_cpu.bytes_read_per_param == 2 + 4 + 12);
  CHECK(on_cpu.bytes_written_per_param == 4 + 12 + 2);
  CHECK(on_cpu.bytes_written_unread_per_param == 4 + 2);
  // The state is the same 12 B whichever way.
  CHECK(on_cpu.state_bytes_per_param == 12);
  // Pure fp32: nothing is written to unread lines.
  CHECK(adam_mixed_precision_cost({4, 4, 0}).bytes_written_unread_per_param == 0);
  // SGD with momentum, DeepSpeed's way: grad 4 + master 4 + momentum 4 read.
  CHECK(sgd_momentum_cost(converted(GradientConversion::on_gpu)).bytes_read_per_param == 4 + 8);
}

TEST_CASE("write-allocate: the share of the copy-out's lines read first adds to the DRAM bytes") {
  const double P = 1e9, bw = 100e9;
  const OptimizerCost deepspeed = adam_mixed_precision_cost(converted(GradientConversion::on_gpu));
  HostSpec h = one_socket_host(bw);
  // Default (ordinary stores): 16 read + 14 written + 2 read for ownership = 32 B/param.
  CHECK(h.cpu.optimizer_write_allocate == 1);
  CHECK(cpu_optimizer_step_times(h, P, deepspeed, {1, 0, 0}).dram_s == doctest::Approx(P * 32 / bw));
  h.cpu.optimizer_write_allocate = 0;  // non-temporal stores
  CHECK(cpu_optimizer_step_times(h, P, deepspeed, {1, 0, 0}).dram_s == doctest::Approx(P * 30 / bw));
  h.cpu.optimizer_write_allocate = 0.5;
  CHECK(cpu_optimizer_step_times(h, P, deepspeed, {1, 0, 0}).dram_s == doctest::Approx(P * 31 / bw));
  // A CPU-side conversion also writes 4 B to unread lines: 18 + 18 + 6 = 42 B/param.
  h.cpu.optimizer_write_allocate = 1;
  const OptimizerCost on_cpu = adam_mixed_precision_cost(converted(GradientConversion::on_cpu));
  CHECK(cpu_optimizer_step_times(h, P, on_cpu, {1, 0, 0}).dram_s == doctest::Approx(P * 42 / bw));
}

TEST_CASE("NUMA: on two sockets a share r of the traffic crosses the inter-socket links of bandwidth U") {
  const double P = 1e9, dram = 172.8e9, upi = 76.8e9;
  const OptimizerCost deepspeed = adam_mixed_precision_cost(converted(GradientConversion::on_gpu));
  const double bytes = 16 + 14 + 2;  // per parameter, write-allocate included
  HostSpec h = one_socket_host(dram);
  h.cpu.sockets = 2;
  h.cpu.upi_Bps = upi;
  // r = 0.5: the links carry 0.5 B per byte, so they bind at U / r = 153.6 GB/s < 172.8 GB/s.
  h.cpu.numa_remote_fraction = 0.5;
  CHECK(h.cpu.optimizer_memory_Bps() == doctest::Approx(153.6e9));
  CHECK(cpu_optimizer_step_times(h, P, deepspeed, {1, 0, 0}).dram_s ==
        doctest::Approx(std::max(P * bytes / dram, 0.5 * P * bytes / upi)));
  // r = 0.25: U / r = 307.2 GB/s, the DRAM binds.
  h.cpu.numa_remote_fraction = 0.25;
  CHECK(h.cpu.optimizer_memory_Bps() == doctest::Approx(dram));
  // Memory bound per socket (r = 0): no term.
  h.cpu.numa_remote_fraction = 0;
  CHECK(cpu_optimizer_step_times(h, P, deepspeed, {1, 0, 0}).dram_s == doctest::Approx(P * bytes / dram));
  // One socket: no term, whatever the other fields say.
  h.cpu.sockets = 1;
  h.cpu.numa_remote_fraction = 1;
  CHECK(h.cpu.optimizer_memory_Bps() == dram);
}

TEST_CASE("the paper's worker host: 2 x Xeon Silver 4214, 2 UPI links at 9.6 GT/s each") {
  const CpuSpec cpu = cpu_from_profile(find_profile("xeon-silver-4214-gen3"));
  CHECK(cpu.sockets == 2);
  // 2 links x 9.6 GT/s x 2 B x 2 directions = 76.8 GB/s.
  CHECK(cpu.upi_Bps == doctest::Approx(2 * 9.6e9 * 2 * 2));
  // The documented defaults: half the traffic remote, ordinary (write-allocating) stores.
  CHECK(cpu.numa_remote_fraction == 0.5);
  CHECK(cpu.optimizer_write_allocate == 1);
  // min(230.4 GB/s x 0.75 = 172.8, 76.8 / 0.5 = 153.6) GB/s.
  CHECK(cpu.optimizer_memory_Bps() == doctest::Approx(153.6e9));
}

TEST_CASE("host profile: the NUMA and write-allocate fields load, and bad ones name their field") {
  using luwu::InputError;
  using luwu::JsonNode;
  // Single socket by default: no NUMA term and no UPI needed.
  CpuSpec one = cpu_from_profile(profile_from_json(JsonNode(host_json(luwu::Json::object()), "host.json")));
  CHECK(one.sockets == 1);
  CHECK(one.optimizer_memory_Bps() == doctest::Approx(200e9));

  luwu::Json two = {{"sockets", field(2, "count")}, {"upi_bandwidth", field(100, "GB/s")},
                    {"numa_remote_fraction", field(1, "fraction")}, {"optimizer_write_allocate", field(0, "fraction")}};
  CpuSpec c = cpu_from_profile(profile_from_json(JsonNode(host_json(two), "host.json")));
  CHECK(c.upi_Bps == doctest::Approx(100e9));
  CHECK(c.numa_remote_fraction == 1);
  CHECK(c.optimizer_write_allocate == 0);
  CHECK(c.optimizer_memory_Bps() == doctest::Approx(100e9));  // min(200, 100 / 1)

  // Two sockets without the link's bandwidth: an error at that field.
  const luwu::Json no_upi = {{"sockets", field(2, "count")}};
  const Profile p = profile_from_json(JsonNode(host_json(no_upi), "host.json"));
  try {
    cpu_from_profile(p);
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(e.file() == "host.json");
    CHECK(e.json_path() == "$.fields.upi_bandwidth");
  }
  // A share above 1 is refused where it is written.
  const luwu::Json too_much = {{"numa_remote_fraction", field(1.5, "fraction")}};
  try {
    profile_from_json(JsonNode(host_json(too_much), "host.json"));
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(std::string(e.json_path()).find("numa_remote_fraction") != std::string::npos);
    CHECK(std::string(e.what()).find("[0, 1]") != std::string::npos);
  }
}
