#pragma once
// What each kind of profile may contain: field names, the dimension of their unit, whether they
// are required, and the range of allowed values.  The one place a new field or kind is declared.
#include <string>
#include <vector>

#include "common/units.hpp"

namespace luwu::models {

enum class FieldRange {
  Positive,          // > 0: bandwidths, rates, capacities, counts of things that must exist
  NonNegative,       // >= 0: latencies, overheads
  UnitInterval,      // [0.001, 1]: efficiencies (below 0.1% no hardware runs, and times grow without bound)
  HalfOpenFraction,  // [0, 1): shares of throughput lost
  Share,             // [0, 1]: shares that may be none or all (of traffic, of stores)
  Flag,              // a JSON boolean with unit "boolean"
  Choice,            // one of FieldSpec::choices, a JSON string with unit "choice"; stored as its index
};

struct FieldSpec {
  std::string name;
  units::Dim dim;    // ignored for Flag
  FieldRange range;
  bool required;
  bool integer;      // counts that must be whole numbers (lanes, ports, cores)
  std::string meaning;
  std::vector<std::string> choices = {};  // Choice only: the allowed values
};

struct KindSpec {
  std::string kind;
  std::string meaning;
  std::vector<FieldSpec> fields;
};

// All kinds, sorted by name.
const std::vector<KindSpec>& profile_kinds();

// The kind's spec, or nullptr if unknown.
const KindSpec* find_kind(const std::string& kind);

// The field's spec within a kind, or nullptr if unknown.
const FieldSpec* find_field(const KindSpec& kind, const std::string& field);

// Converts a unit string of a profile to base units: common/units.hpp's table plus a few units
// only profiles use (e.g. "Bpkt/s").  Returns false if the unit is unknown.
bool profile_unit(const std::string& unit, units::Dim& dim, double& to_base);

std::string dim_name(units::Dim dim);

}  // namespace luwu::models
