// Loading hardware profiles: strict validation, conversion to base units.
#include "models/profile.hpp"

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <filesystem>
#include <stdexcept>

#include "models/profile_schema.hpp"

namespace luwu::models {

namespace {

std::vector<std::string> kind_names() {
  std::vector<std::string> names;
  for (const auto& k : profile_kinds()) names.push_back(k.kind);
  return names;
}

std::vector<std::string> field_names(const KindSpec& kind) {
  std::vector<std::string> names;
  for (const auto& f : kind.fields) names.push_back(f.name);
  return names;
}

bool is_blank(const std::string& s) { return s.find_first_not_of(" \t\r\n") == std::string::npos; }

// What hardware can be, by dimension, in base units: a value outside it is a slip (a unit, an
// exponent) that would only give infinite or meaningless times (1e-300 FLOP/s, a 1e308 s latency),
// so it is refused at its field.  The bounds are generous on purpose: 1 EB, 10 PB/s, 1000 s.
struct Magnitude {
  double min_positive;
  double max;
};
Magnitude plausible_magnitude(units::Dim dim) {
  switch (dim) {
    case units::Dim::Bytes: return {1e-3, 1e18};
    case units::Dim::BytesPerSecond: return {1e3, 1e16};
    case units::Dim::Seconds: return {1e-12, 1e3};
    case units::Dim::FlopsPerSecond: return {1e6, 1e19};
    case units::Dim::Flops: return {1e-3, 1e30};
    case units::Dim::Count: return {1e-3, 1e12};
    case units::Dim::Watts: return {1e-3, 1e7};
    case units::Dim::Hertz: return {1, 1e13};
    case units::Dim::PacketsPerSecond: return {1, 1e13};
    case units::Dim::Fraction: return {0, 1};
  }
  return {0, 1e300};
}
std::string fmt_base(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

constexpr double kMinEfficiency = 1e-3;

// Range check shared by loading and overrides; returns "" when fine, else what is wrong.
std::string range_problem(const FieldSpec& spec, double value) {
  if (!std::isfinite(value)) return "expected a finite number";
  switch (spec.range) {
    case FieldRange::Positive:
      if (!(value > 0)) return "must be positive";
      break;
    case FieldRange::NonNegative:
      if (value < 0) return "must be non-negative";
      break;
    case FieldRange::UnitInterval:
      // An efficiency divides a time: near zero it makes the time unbounded (1e-300 stalled the
      // engine, 1e-100 gave a 1.5e97 s iteration).  No hardware runs below 0.1% of its rating.
      if (!(value >= kMinEfficiency && value <= 1)) return "must be a fraction in [0.001, 1] (an efficiency)";
      break;
    case FieldRange::HalfOpenFraction:
      if (!(value >= 0 && value < 1)) return "must be a fraction in [0, 1)";
      break;
    case FieldRange::Share:
      if (!(value >= 0 && value <= 1)) return "must be a fraction in [0, 1]";
      break;
    case FieldRange::Flag:
      if (value != 0 && value != 1) return "must be true or false";
      break;
    case FieldRange::Choice:
      if (!(value >= 0 && value < static_cast<double>(spec.choices.size())) || std::floor(value) != value)
        return "must be one of " + quoted_alternatives(spec.choices);
      break;
  }
  if (spec.integer && std::floor(value) != value) return "must be a whole number";
  if (spec.range == FieldRange::Positive || spec.range == FieldRange::NonNegative) {
    const Magnitude m = plausible_magnitude(spec.dim);
    if (value > m.max)
      return "is beyond any hardware (at most " + fmt_base(m.max) + " " + dim_name(spec.dim) + " here)";
    if (value > 0 && value < m.min_positive)
      return "is too small for any hardware (at least " + fmt_base(m.min_positive) + " " + dim_name(spec.dim) +
             " here): the times it would give are not finite";
  }
  return "";
}

ProfileField read_field(const JsonNode& node, const FieldSpec& spec) {
  node.expect_object();
  node.only_keys({"value", "unit", "source", "assumption"});
  ProfileField field;
  field.unit = node.at("unit").as_string();
  field.source = node.at("source").as_string();
  if (is_blank(field.source)) node.at("source").fail("the source must say where the number comes from");
  field.assumption = node.get_bool("assumption", false);

  if (spec.range == FieldRange::Flag) {
    if (field.unit != "boolean")
      node.at("unit").fail("field \"" + spec.name + "\" is a flag: its unit must be \"boolean\", found \"" +
                           field.unit + "\"");
    field.value = field.value_in_unit = node.at("value").as_bool() ? 1.0 : 0.0;
    return field;
  }

  if (spec.range == FieldRange::Choice) {
    if (field.unit != "choice")
      node.at("unit").fail("field \"" + spec.name + "\" is a choice: its unit must be \"choice\", found \"" +
                           field.unit + "\"");
    field.value = field.value_in_unit = static_cast<double>(node.at("value").as_choice_index(spec.choices, spec.name));
    return field;
  }

  units::Dim dim;
  double to_base = 1;
  if (!profile_unit(field.unit, dim, to_base)) node.at("unit").fail("unknown unit \"" + field.unit + "\"");
  if (dim != spec.dim)
    node.at("unit").fail("unit \"" + field.unit + "\" has dimension " + dim_name(dim) + ", but field \"" +
                         spec.name + "\" needs " + dim_name(spec.dim));
  JsonNode value = node.at("value");
  field.value_in_unit = value.as_number();
  field.value = field.value_in_unit * to_base;
  std::string problem = range_problem(spec, field.value);
  if (!problem.empty()) value.fail("\"" + spec.name + "\" " + problem + ", found " + value.raw().dump());
  return field;
}

}  // namespace

double Profile::get(const std::string& field) const {
  auto it = fields.find(field);
  if (it == fields.end())
    throw InputError(file, json_path + ".fields." + field, "profile \"" + name + "\" (kind " + kind + ") has no field \"" + field + "\"");
  return it->second.value;
}

double Profile::get_or(const std::string& field, double dflt) const {
  auto it = fields.find(field);
  return it == fields.end() ? dflt : it->second.value;
}

bool Profile::has(const std::string& field) const { return fields.count(field) != 0; }

Profile profile_from_json(const JsonNode& node) {
  node.expect_object();
  node.only_keys({"name", "kind", "description", "fields"});
  Profile profile;
  profile.file = node.file();
  profile.json_path = node.path();
  profile.name = node.at("name").as_string();
  if (is_blank(profile.name)) node.at("name").fail("the profile name must not be empty");
  profile.description = node.at("description").as_string();
  const std::vector<std::string> kinds = kind_names();
  profile.kind = kinds[node.at("kind").as_choice_index(kinds, "profile kind")];
  const KindSpec* kind = find_kind(profile.kind);
  JsonNode fields = node.at("fields");
  fields.expect_object();
  for (const auto& key : fields.keys()) {
    const FieldSpec* spec = find_field(*kind, key);
    if (!spec && profile.kind == "gpu" && key == "gemm_half_efficiency_dim")
      throw InputError(node.file(), fields.path() + "." + key,
                       "\"gemm_half_efficiency_dim\" was removed: a GEMM's shape now enters through the roofline "
                       "(hbm_bandwidth x hbm_efficiency) and wave quantization (sm_count, kernel_tile); delete the field "
                       "(models/gpu.hpp)");
    if (!spec) {
      throw InputError(node.file(), fields.path() + "." + key,
                       "unknown field \"" + key + "\" for kind " + profile.kind + did_you_mean(key, field_names(*kind)));
    }
    profile.fields[key] = read_field(fields.at(key), *spec);
  }
  for (const auto& spec : kind->fields)
    if (spec.required && !profile.has(spec.name))
      fields.fail("missing required field \"" + spec.name + "\" for kind " + profile.kind + " (" + spec.meaning + ")");
  return profile;
}

Profile load_profile_file(const std::string& path) {
  Json json = load_json_file(path);
  return profile_from_json(JsonNode(json, path));
}

std::string profiles_dir() {
  if (const char* dir = std::getenv("LUWUSIM_PROFILE_DIR"); dir && *dir) return dir;
  return std::string(LUWUSIM_SOURCE_DIR) + "/models/profiles";
}

std::vector<std::string> shipped_profile_names() { return json_file_stems(profiles_dir()); }

Profile ProfileCatalog::resolve(const std::string& name_or_path) const {
  if (const Profile* own = find(name_or_path)) return *own;
  return find_profile(name_or_path);
}

luwu::Json catalog_to_json(const ProfileCatalog& catalog) {
  Json out = Json::object();
  for (const auto& [name, profile] : catalog.profiles()) out[name] = profile_to_json(profile);
  return out;
}

ProfileCatalog catalog_from_json(const JsonNode& node) {
  ProfileCatalog catalog;
  for (const auto& key : node.keys()) {
    JsonNode entry = node.at(key);
    Profile profile = profile_from_json(entry);
    if (profile.name != key) entry.at("name").fail("the profile is listed as \"" + key + "\" but named \"" + profile.name + "\"");
    catalog.add(std::move(profile));
  }
  return catalog;
}

Profile find_profile(const std::string& name_or_path) {
  bool is_path = name_or_path.find('/') != std::string::npos ||
                 (name_or_path.size() > 5 && name_or_path.substr(name_or_path.size() - 5) == ".json");
  if (is_path) return load_profile_file(name_or_path);
  std::string path = profiles_dir() + "/" + name_or_path + ".json";
  if (std::filesystem::exists(path)) return load_profile_file(path);
  auto names = shipped_profile_names();
  throw InputError(name_or_path, "",
                   "no shipped profile of that name in " + profiles_dir() + did_you_mean(name_or_path, names) +
                       "; `luwusim profiles list` shows them");
}

void apply_override(Profile& profile, const std::string& field, double value_in_base_units, const std::string& source) {
  const KindSpec* kind = find_kind(profile.kind);
  if (!kind) throw std::invalid_argument("profile \"" + profile.name + "\" has unknown kind \"" + profile.kind + "\"");
  const FieldSpec* spec = find_field(*kind, field);
  if (!spec) {
    throw std::invalid_argument("profile \"" + profile.name + "\": unknown field \"" + field + "\" for kind " +
                                profile.kind + did_you_mean(field, field_names(*kind)));
  }
  std::string problem = range_problem(*spec, value_in_base_units);
  if (!problem.empty())
    throw std::invalid_argument("profile \"" + profile.name + "\": override of \"" + field + "\" " + problem);
  ProfileField& f = profile.fields[field];
  f.value = f.value_in_unit = value_in_base_units;
  f.unit = spec->range == FieldRange::Flag ? "boolean" : spec->range == FieldRange::Choice ? "choice" : dim_name(spec->dim);
  f.source = source;
  f.assumption = false;
}

void override_field(Profile& profile, const std::string& field, const JsonNode& value) {
  const KindSpec* kind = find_kind(profile.kind);
  if (!kind) value.fail("profile \"" + profile.name + "\" has unknown kind \"" + profile.kind + "\"");
  const FieldSpec* spec = find_field(*kind, field);
  if (!spec) {
    value.fail("unknown field \"" + field + "\" for profile \"" + profile.name + "\" (kind " + profile.kind + ")" +
               did_you_mean(field, field_names(*kind)));
  }
  double base = 0;
  if (spec->range == FieldRange::Flag) {
    if (!value.raw().is_boolean()) value.fail("field \"" + field + "\" is a flag: expected true or false");
    base = value.as_bool() ? 1 : 0;
  } else if (spec->range == FieldRange::Choice) {
    base = static_cast<double>(value.as_choice_index(spec->choices, field));
  } else if (value.is_number()) {
    base = value.as_number();
  } else if (value.is_string()) {
    const std::string text = value.as_string();
    std::size_t pos = 0;
    double number = 0;
    try {
      number = std::stod(text, &pos);
    } catch (const std::exception&) {
      value.fail("expected a number, or a number with a unit of " + dim_name(spec->dim) + ", found \"" + text + "\"");
    }
    while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
    const std::string unit = text.substr(pos);
    units::Dim dim;
    double to_base = 1;
    if (unit.empty()) value.fail("\"" + text + "\" has no unit: write a bare JSON number (in " + dim_name(spec->dim) + ") or add a unit");
    if (!profile_unit(unit, dim, to_base)) value.fail("unknown unit \"" + unit + "\"");
    if (dim != spec->dim)
      value.fail("unit \"" + unit + "\" has dimension " + dim_name(dim) + ", but field \"" + field + "\" needs " +
                 dim_name(spec->dim));
    base = number * to_base;
  } else {
    value.fail(std::string("expected a number or a number with a unit, found ") + value.raw().type_name());
  }
  try {
    apply_override(profile, field, base, "override at " + value.file() + " " + value.path());
  } catch (const std::invalid_argument& e) {
    value.fail(e.what() + (", found " + value.raw().dump()));
  }
}

luwu::Json profile_to_json(const Profile& profile) {
  const KindSpec* kind = find_kind(profile.kind);
  Json fields = Json::object();
  for (const auto& [name, f] : profile.fields) {
    const FieldSpec* spec = kind ? find_field(*kind, name) : nullptr;
    bool flag = spec && spec->range == FieldRange::Flag;
    bool choice = spec && spec->range == FieldRange::Choice;
    Json j = Json::object();
    if (flag)
      j["value"] = f.value != 0;
    else if (choice)
      j["value"] = spec->choices.at(static_cast<std::size_t>(f.value));
    else
      j["value"] = f.value;
    j["unit"] = flag ? std::string("boolean") : choice ? std::string("choice") : spec ? dim_name(spec->dim) : f.unit;
    j["source"] = f.source;
    if (f.assumption) j["assumption"] = true;
    fields[name] = j;
  }
  return Json{{"name", profile.name}, {"kind", profile.kind}, {"description", profile.description}, {"fields", fields}};
}

void require_kind(const Profile& profile, const std::vector<std::string>& kinds) {
  for (const auto& k : kinds)
    if (profile.kind == k) return;
  throw InputError(profile.file, profile.json_path + ".kind",
                   "profile \"" + profile.name + "\" has kind \"" + profile.kind + "\", expected " + quoted_alternatives(kinds));
}

}  // namespace luwu::models
