// The GPU update engine: PCIe-bound for mixed-precision Adam, derived by hand here.
#include <doctest/doctest.h>

#include "models/gpu_update_engine.hpp"
#include "models/profile.hpp"

using namespace luwu::models;

TEST_CASE("a GPU update over PCIe Gen4 x16 is bound by the 14 B/param each way, not by HBM") {
  auto gpu = gpu_from_profile(find_profile("a100-40gb-pcie"));
  auto pcie = pcie_from_profile(find_profile("pcie-gen4-x16"));
  const double params = 1e9;
  // Gen4 x16: 16 GT/s x 16 lanes x 128/130 / 8 = 31.51 GB/s raw, x 256/282 (TLP payload over
  // payload + header + DLLP overhead) = 28.60 GB/s per direction.
  const double pcie_Bps = 16e9 * 16 * 128.0 / 130 / 8 * 256 / 282;
  auto t = gpu_update_times(params, adam_mixed_precision_cost(), gpu, pcie);
  CHECK(t.pcie_s == doctest::Approx(params * 14 / pcie_Bps).epsilon(1e-3).scale(0));
  // In HBM: 28 B/param at the 88% of 1,555 GB/s a streaming kernel reaches.
  CHECK(t.gpu_s == doctest::Approx(params * 28 / (0.88 * 1555e9)).epsilon(1e-3).scale(0));
  CHECK(t.total_s == t.pcie_s);
}
