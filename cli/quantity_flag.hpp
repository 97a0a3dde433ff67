#pragma once
// A quantity given on the command line must name its unit: "--gpu-mem 40" would otherwise mean
// 40 bytes (scenario files take bare numbers in base units; a flag is too easy to misread).
#include <stdexcept>
#include <string>

#include "common/units.hpp"

namespace luwu::cli {

inline double quantity_flag(const std::string& flag, const std::string& text, units::Dim dim, const std::string& example) {
  std::size_t end = 0;
  try {
    (void)std::stod(text, &end);
  } catch (const std::exception&) {
    end = 0;
  }
  if (end > 0 && text.find_first_not_of(" \t", end) == std::string::npos)
    throw std::invalid_argument(flag + " " + text + ": give a unit, e.g. " + example);
  try {
    return units::parse_quantity(text, dim);
  } catch (const std::invalid_argument& e) {
    throw std::invalid_argument(flag + ": " + e.what());
  }
}

}  // namespace luwu::cli
