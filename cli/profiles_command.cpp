// `luwusim profiles list|show`: the shipped hardware profiles, their values, units and sources.
#include <algorithm>
#include <array>
#include <iostream>
#include <memory>
#include <string>

#include <fmt/format.h>

#include "cli/command_registry.hpp"
#include "common/units.hpp"
#include "models/derived.hpp"
#include "models/profile.hpp"
#include "models/profile_schema.hpp"

namespace {

using namespace luwu::models;

struct ProfilesOptions {
  bool list_json = false;
  std::string show_name;
  bool show_json = false;
};

int run_list(const ProfilesOptions& o) {
  luwu::Json rows = luwu::Json::array();
  std::size_t name_w = 4, kind_w = 4;
  std::vector<Profile> profiles;
  for (const auto& name : shipped_profile_names()) {
    profiles.push_back(find_profile(name));  // a bad file stops the listing: exit 2 naming it
    name_w = std::max(name_w, name.size());
    kind_w = std::max(kind_w, profiles.back().kind.size());
  }
  if (o.list_json) {
    for (const auto& p : profiles)
      rows.push_back({{"name", p.name}, {"kind", p.kind}, {"description", p.description}, {"file", p.file}});
    std::cout << rows.dump(2) << "\n";
    return 0;
  }
  std::cout << fmt::format("{:<{}}  {:<{}}  {}\n", "name", name_w, "kind", kind_w, "description");
  for (const auto& p : profiles)
    std::cout << fmt::format("{:<{}}  {:<{}}  {}\n", p.name, name_w, p.kind, kind_w, p.description);
  std::cerr << profiles.size() << " profiles in " << profiles_dir() << "\n";
  return 0;
}

// A derived value in a readable scale, with its unit.
std::string readable(double value, const std::string& unit) {
  if (unit == "B/s") return value >= 1e9 ? fmt::format("{:.4g} GB/s", value / 1e9) : fmt::format("{:.4g} MB/s", value / 1e6);
  if (unit == "B") return luwu::units::bytes(value);
  return fmt::format("{:.4g} {}", value, unit);
}

std::string base_unit(const Profile& p, const std::string& field) {
  const KindSpec* kind = find_kind(p.kind);
  const FieldSpec* spec = kind ? find_field(*kind, field) : nullptr;
  if (!spec) return p.fields.at(field).unit;
  if (spec->range == FieldRange::Choice) return "choice";
  return spec->range == FieldRange::Flag ? "boolean" : dim_name(spec->dim);
}

// A choice field's value as written ("soc"), or "" for any other field.
std::string choice_text(const Profile& p, const std::string& field) {
  const KindSpec* kind = find_kind(p.kind);
  const FieldSpec* spec = kind ? find_field(*kind, field) : nullptr;
  if (!spec || spec->range != FieldRange::Choice) return "";
  return spec->choices.at(static_cast<std::size_t>(p.fields.at(field).value));
}

int run_show(const ProfilesOptions& o) {
  Profile p = find_profile(o.show_name);
  auto derived = derived_quantities(p);
  if (o.show_json) {
    luwu::Json j = profile_to_json(p);
    j["file"] = p.file;
    luwu::Json d = luwu::Json::object();
    for (const auto& q : derived) d[q.name] = {{"value", q.value}, {"unit", q.unit}, {"formula", q.formula}};
    j["derived"] = d;
    std::cout << j.dump(2) << "\n";
    return 0;
  }
  std::cout << p.name << " (" << p.kind << "): " << p.description << "\n";
  std::cout << "file: " << p.file << "\n\n";
  std::size_t field_w = 5, value_w = 5, base_w = 10;
  std::vector<std::array<std::string, 4>> rows;
  for (const auto& [name, f] : p.fields) {
    bool flag = base_unit(p, name) == "boolean";
    const std::string choice = choice_text(p, name);
    std::string as_written = flag ? (f.value != 0 ? "true" : "false")
                             : !choice.empty() ? choice
                                               : fmt::format("{:g} {}", f.value_in_unit, f.unit);
    std::string base = flag || !choice.empty() ? "" : fmt::format("{:.6g} {}", f.value, base_unit(p, name));
    rows.push_back({name, as_written, base, (f.assumption ? "[assumption] " : "") + f.source});
    field_w = std::max(field_w, name.size());
    value_w = std::max(value_w, as_written.size());
    base_w = std::max(base_w, base.size());
  }
  for (const auto& q : derived) field_w = std::max(field_w, q.name.size());
  std::cout << fmt::format("{:<{}}  {:<{}}  {:<{}}  {}\n", "field", field_w, "value", value_w, "base units", base_w, "source");
  for (const auto& r : rows)
    std::cout << fmt::format("{:<{}}  {:<{}}  {:<{}}  {}\n", r[0], field_w, r[1], value_w, r[2], base_w, r[3]);
  if (const KindSpec* kind = find_kind(p.kind)) {
    bool header = false;
    for (const FieldSpec& f : kind->fields) {
      if (f.required || p.fields.count(f.name)) continue;
      if (!header) std::cout << "\nnot given (optional)\n";
      header = true;
      std::cout << fmt::format("{:<{}}  {}\n", f.name, field_w, f.meaning);
    }
  }
  if (!derived.empty()) {
    std::cout << "\nderived\n";
    for (const auto& q : derived)
      std::cout << fmt::format("{:<{}}  {:<{}}  {}\n", q.name, field_w, readable(q.value, q.unit),
                               value_w + 2 + base_w, q.formula);
  }
  return 0;
}

const bool registered = luwu::cli::register_command(
    "profiles", "List and show hardware profiles (values, units, sources)", [](CLI::App& app) {
      auto o = std::make_shared<ProfilesOptions>();
      app.require_subcommand(1);
      CLI::App* list = app.add_subcommand("list", "List shipped profiles: name, kind, description (sorted)");
      list->add_flag("--json", o->list_json, "JSON output");
      CLI::App* show = app.add_subcommand("show", "Show one profile's fields with units and sources");
      show->add_option("name", o->show_name, "a shipped profile name, or a path to a profile .json file")->required();
      show->add_flag("--json", o->show_json, "the loaded profile as JSON, values in base units");
      return [o, list]() -> int { return list->parsed() ? run_list(*o) : run_show(*o); };
    });

}  // namespace
