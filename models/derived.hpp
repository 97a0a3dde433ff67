#pragma once
// The numbers a profile implies (achieved bandwidths, goodputs, ridge points), with the formula
// that gives each, for `luwusim profiles show` and reports.
#include <string>
#include <vector>

#include "models/profile.hpp"

namespace luwu::models {

struct DerivedQuantity {
  std::string name;
  double value;          // base units
  std::string unit;      // base unit name
  std::string formula;
};

// What the profile's kind implies; empty for kinds with nothing to derive.
std::vector<DerivedQuantity> derived_quantities(const Profile& profile);

}  // namespace luwu::models
