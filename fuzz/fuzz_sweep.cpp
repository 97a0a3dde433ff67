// libFuzzer target: the sweep-file door (sim::sweep_from_text: a scenario, or {"base", "axes"}
// with its own parse that keeps the axes' order) and the expansion of its points.  The bytes are
// the file's text, so deep nesting and bad JSON reach the door itself.  A sweep of more than 1e4
// points is expanded only up to its checks (the caps are tested in tests/sim/sweep_test.cpp; here
// they would only spend the fuzzer's memory limit).
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "common/input_error.hpp"
#include "sim/experiment/sweep.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto sweep = luwu::sim::sweep_from_text(text, "/nonexistent-fuzz-dir/fuzz.sweep.json");
    double points = 1;
    for (const auto& axis : sweep.axes) points *= static_cast<double>(axis.values.size());
    if (points <= 1e4) luwu::sim::expand_sweep(sweep);
  } catch (const luwu::InputError&) {
  } catch (const std::invalid_argument&) {
  }
  return 0;
}
