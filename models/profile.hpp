#pragma once
// A hardware profile: one device's numbers, each with its unit and its source, loaded from a JSON
// file in models/profiles/ (or inline in a scenario) and converted to SI base units (bytes,
// bytes/s, s, FLOP/s, packets/s, Hz, count, fraction).  The typed specs (GpuSpec, PcieSpec, ...)
// are built from a Profile of the right kind.
//
// File format:
//   {"name": "a100-40gb-sxm", "kind": "gpu", "description": "...",
//    "fields": {"peak_fp16_flops": {"value": 312, "unit": "TFLOP/s", "source": "NVIDIA A100 datasheet"},
//               "collective_interference": {"value": 0.15, "unit": "fraction", "assumption": true,
//                                           "source": "why this value"}, ...}}
// Every field needs a unit (of the dimension its kind expects; see profile_schema.hpp) and a
// source; an assumption is marked "assumption": true with its reasoning in "source".  Flags take a
// JSON boolean value with unit "boolean".  Validation is strict: a missing unit or source, an
// unknown field (the nearest known one is suggested), a unit of the wrong dimension, a value out
// of range (e.g. a non-positive bandwidth) is an InputError naming the file and JSON path.
#include <map>
#include <string>
#include <vector>

#include "common/json_input.hpp"

namespace luwu::models {

struct ProfileField {
  double value = 0;              // in SI base units (booleans: 1 or 0)
  std::string unit;              // the unit as written in the profile
  double value_in_unit = 0;      // the value as written (in `unit`)
  std::string source;            // datasheet, paper, measurement, or the reasoning of an assumption
  bool assumption = false;
};

struct Profile {
  std::string name;
  std::string kind;              // gpu, pcie, nvlink, nvswitch, nic, smartnic, switch, ssd, memory, host
  std::string description;
  std::string file;              // where it was loaded from ("" or the scenario file for inline ones)
  std::string json_path = "$";   // where the profile object sits in `file`
  std::map<std::string, ProfileField> fields;  // sorted by name

  // The field's value in base units; InputError naming the file and <json_path>.fields.<field> if absent.
  double get(const std::string& field) const;
  double get_or(const std::string& field, double dflt) const;
  bool has(const std::string& field) const;
};

// A scenario's own profiles, by name: its inline profiles and shipped profiles whose fields it
// overrides (sim/experiment/scenario.hpp).  Explicit data, never global: the topology builders take one
// (topologies/builders.hpp) and resolve names with resolve(); the topology keeps it
// (Topology::profiles, saved under the topology file's "profiles" key) so the simulator's hardware
// specs see the same numbers as the builder's links.  An empty catalog means shipped profiles only.
class ProfileCatalog {
 public:
  // Adds or replaces the profile of that name.
  void add(Profile profile) { profiles_[profile.name] = std::move(profile); }
  // The catalog's profile of that name, or nullptr.
  const Profile* find(const std::string& name) const {
    auto it = profiles_.find(name);
    return it == profiles_.end() ? nullptr : &it->second;
  }
  // The catalog's profile, else find_profile(name_or_path).
  Profile resolve(const std::string& name_or_path) const;
  bool empty() const { return profiles_.empty(); }
  const std::map<std::string, Profile>& profiles() const { return profiles_; }

 private:
  std::map<std::string, Profile> profiles_;  // sorted: the JSON form is deterministic
};

// {"<name>": profile_to_json(profile), ...}; catalog_from_json reads it back (strictly validated,
// errors naming node.file() and paths below node.path()).  Values round-trip exactly.
luwu::Json catalog_to_json(const ProfileCatalog& catalog);
ProfileCatalog catalog_from_json(const luwu::JsonNode& node);

// Loads and strictly validates a profile file.  InputError(file, json path, what) on any problem.
Profile load_profile_file(const std::string& path);

// Validates a profile given as JSON (e.g. inline in a scenario file); errors name node.file() and
// paths below node.path().
Profile profile_from_json(const luwu::JsonNode& node);

// A shipped profile by name ("a100-40gb-sxm"), or a path to a .json file (anything containing '/'
// or ending in ".json").  An unknown name is an InputError that suggests the nearest shipped one.
// Knows no scenario's profiles: ProfileCatalog::resolve looks in a catalog first.
Profile find_profile(const std::string& name_or_path);

// Names of the shipped profiles (file stems in profiles_dir()), sorted.
std::vector<std::string> shipped_profile_names();

// $LUWUSIM_PROFILE_DIR if set, else LUWUSIM_SOURCE_DIR "/models/profiles".
std::string profiles_dir();

// Replaces one field's value (given in base units), e.g. from a scenario's overrides.  The field
// must be known for the profile's kind and the value must satisfy its range; otherwise
// std::invalid_argument naming the profile and field.  The source becomes `source` and the field
// is marked as not coming from the profile.
void apply_override(Profile& profile, const std::string& field, double value_in_base_units,
                    const std::string& source = "override");

// A scenario's override of one field, given as JSON at `value` (its path names the field): a
// number with a unit ("7GB/s", "2 us"; the unit must have the field's dimension), a bare number in
// the base unit of the field's dimension (B, B/s, s, FLOP/s, count, fraction, Hz, pkt/s: what
// `luwusim profiles show` prints), or true/false for a flag.  An unknown field (the nearest known
// one is suggested), a wrong dimension or a value out of range is an InputError naming
// value.file() and value.path().  The field's source becomes "override at <file> <path>".
void override_field(Profile& profile, const std::string& field, const luwu::JsonNode& value);

// Serialises a loaded profile with base-unit values, units as written, sources, assumption flags.
luwu::Json profile_to_json(const Profile& profile);

// InputError naming profile.file and "$.kind" unless profile.kind is one of `kinds`.
void require_kind(const Profile& profile, const std::vector<std::string>& kinds);

// The profile kinds each spec is built from, written once: the spec constructors require them
// (specs.cpp) and a scenario's cluster roles are checked against them (sim/experiment/scenario.cpp).
namespace spec_kinds {
inline const std::vector<std::string> gpu{"gpu"};
inline const std::vector<std::string> pcie{"pcie"};
inline const std::vector<std::string> nvlink{"nvlink", "nvswitch"};
inline const std::vector<std::string> nic{"nic", "smartnic"};
inline const std::vector<std::string> smartnic{"smartnic"};
inline const std::vector<std::string> network_switch{"switch"};
inline const std::vector<std::string> ssd{"ssd"};
inline const std::vector<std::string> memory{"memory", "host"};  // a memory device, or a host's DRAM
inline const std::vector<std::string> host{"host"};
}  // namespace spec_kinds

}  // namespace luwu::models
