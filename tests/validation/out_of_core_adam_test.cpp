// The out-of-core optimizer against the in-memory kernel: same bits, with a staging buffer far
// smaller than the state file so every step streams many blocks.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <unistd.h>

#include "tests/validation/adam_test_data.hpp"
#include "validation/adam_parallel.hpp"
#include "validation/out_of_core_adam.hpp"
#include "validation/scratch_file.hpp"

using namespace luwu::validation;
using namespace luwu::validation::testing;

namespace {

std::string scratch_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("luwusim-test-" + std::to_string(::getpid()) + "-" + name)).string();
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

void check_out_of_core_equals_in_memory(bool try_direct_io, HalfFormat format, WeightDecayMode mode) {
  constexpr std::size_t kParams = 50'000;  // with the smallest buffer: 13 blocks, the last partial
  constexpr int kSteps = 5;
  AdamHyperparameters h;
  h.weight_decay = 0.01;
  h.weight_decay_mode = mode;

  OptimizerState in_memory = random_state(kParams, 3);
  OptimizerState initial = in_memory;
  const std::string path = scratch_path(try_direct_io ? "direct" : "buffered");
  OutOfCoreAdam out_of_core(path, kParams, 4 * 3 * 4 * 4096, try_direct_io);  // 4 slots of 4096 params
  REQUIRE(out_of_core.block_params() == 4096);
  REQUIRE(out_of_core.block_count() == 13);  // ceil(50000 / 4096)
  REQUIRE(out_of_core.staging_bytes() < out_of_core.file_bytes() / 3);
  out_of_core.write_state(initial.master.data(), initial.m.data(), initial.v.data());

  ThreadPool pool(2);
  std::mt19937_64 grad_rng(11);
  std::vector<std::uint16_t> out_of_core_params(kParams);
  for (int step = 1; step <= kSteps; ++step) {
    const auto grads = random_gradients(kParams, format, grad_rng);
    const AdamStepScalars s = AdamStepScalars::for_step(h, step);
    adam_step_parallel(pool, best_isa(), s, format, slice_of(in_memory, grads));
    out_of_core.step(pool, best_isa(), s, format, grads.data(), out_of_core_params.data());
    REQUIRE(out_of_core_params == in_memory.params_out);
  }
  OptimizerState read_back(kParams);
  out_of_core.read_state(read_back.master.data(), read_back.m.data(), read_back.v.data());
  CHECK(same_bits(read_back.master, in_memory.master));
  CHECK(same_bits(read_back.m, in_memory.m));
  CHECK(same_bits(read_back.v, in_memory.v));
  CHECK(!same_bits(read_back.master, initial.master));  // the steps did change the file
}

}  // namespace

TEST_CASE("out-of-core steps give the in-memory kernel's bits") {
  check_out_of_core_equals_in_memory(true, HalfFormat::fp16, WeightDecayMode::decoupled);
  check_out_of_core_equals_in_memory(true, HalfFormat::bf16, WeightDecayMode::l2_in_gradient);
  check_out_of_core_equals_in_memory(false, HalfFormat::fp16, WeightDecayMode::l2_in_gradient);
}

TEST_CASE("the state file is removed with the optimizer, and a tiny buffer is refused") {
  const std::string path = scratch_path("lifetime");
  {
    OutOfCoreAdam o(path, 5000, 1 << 20);
    CHECK(std::filesystem::exists(path));
    CHECK(o.file_bytes() >= 5000 * 12);
  }
  CHECK(!std::filesystem::exists(path));
  CHECK_THROWS_AS(OutOfCoreAdam(path, 5000, 1000), std::invalid_argument);
  CHECK(!std::filesystem::exists(path));
}

TEST_CASE("scratch files are created exclusively: a file or link planted at the name is never written through") {
  // calibrate and validate name their scratch files after the process id in /tmp; opened with
  // O_CREAT | O_TRUNC they followed a planted link and overwrote its target with gigabytes.
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("luwusim-scratch-test-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path victim = dir / "victim", planted = dir / "scratch.bin";
  std::ofstream(victim) << "keep me";
  fs::create_symlink(victim, planted);
  CHECK_THROWS_WITH_AS(luwu::validation::create_scratch_file(planted.string()),
                       doctest::Contains("something already has its name"), std::runtime_error);
  std::ifstream in(victim);
  std::string text;
  std::getline(in, text);
  CHECK(text == "keep me");
  // A fresh name is made, readable and writable (buffered here: a 1-byte write is not direct I/O).
  const auto made = luwu::validation::create_scratch_file((dir / "fresh.bin").string(), /*try_direct=*/false);
  CHECK(made.fd >= 0);
  CHECK(::write(made.fd, "x", 1) == 1);
  ::close(made.fd);
  fs::remove_all(dir);
}
