#include "sim/experiment/sweep.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include <fmt/format.h>

#include "sim/experiment/scenario.hpp"

namespace luwu::sim {
namespace {

using OrderedJson = nlohmann::ordered_json;

std::vector<std::string> split_key(const std::string& key) {
  std::vector<std::string> parts;
  std::string part;
  for (char c : key) {
    if (c == '.') {
      parts.push_back(part);
      part.clear();
    } else {
      part += c;
    }
  }
  parts.push_back(part);
  return parts;
}

bool is_index(const std::string& s) {
  return !s.empty() && s.size() < 9 && s.find_first_not_of("0123456789") == std::string::npos;
}

// Values of a --set split at commas that are outside brackets, braces and quotes.
std::vector<std::string> split_values(const std::string& text, const std::string& option) {
  std::vector<std::string> out;
  std::string cur;
  int depth = 0;
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c == '\\' && i + 1 < text.size()) cur += c, c = text[++i];
      else if (c == '"') quoted = false;
    } else if (c == '"') {
      quoted = true;
    } else if (c == '[' || c == '{') {
      ++depth;
    } else if (c == ']' || c == '}') {
      --depth;
    } else if (c == ',' && depth == 0) {
      out.push_back(cur);
      cur.clear();
      continue;
    }
    cur += c;
  }
  if (quoted || depth != 0) throw std::invalid_argument("--set " + option + ": unbalanced quotes or brackets");
  out.push_back(cur);
  return out;
}

// A --set value: JSON where it parses (numbers, objects, lists), else the text as a string.
luwu::Json value_of(const std::string& text) {
  // Too deep or too large is refused (InputError); any other text that is not JSON is a string.
  luwu::require_json_bounds(text, "--set");
  try {
    return luwu::Json::parse(text);
  } catch (const luwu::Json::exception&) {
    return text;
  }
}

}  // namespace

std::uint64_t fnv1a_64(const std::string& text) {
  std::uint64_t h = 14695981039346656037ull;  // FNV-1a offset basis and prime (64-bit)
  for (unsigned char c : text) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

SweepAxis parse_set_option(const std::string& text) {
  auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    throw std::invalid_argument("--set " + text + ": expected key=value[,value...] (e.g. cluster.workers=4,8)");
  SweepAxis axis;
  axis.key = text.substr(0, eq);
  for (const auto& part : split_key(axis.key))
    if (part.empty()) throw std::invalid_argument("--set " + text + ": empty part in the key \"" + axis.key + "\"");
  const std::string values = text.substr(eq + 1);
  if (values.empty()) throw std::invalid_argument("--set " + text + ": no value for \"" + axis.key + "\"");
  for (const auto& v : split_values(values, text)) {
    if (v.empty()) throw std::invalid_argument("--set " + text + ": empty value for \"" + axis.key + "\"");
    axis.values.push_back(value_of(v));
  }
  return axis;
}

void set_axis(SweepDefinition& sweep, SweepAxis axis) {
  for (auto& a : sweep.axes)
    if (a.key == axis.key) {
      a = std::move(axis);
      return;
    }
  sweep.axes.push_back(std::move(axis));
}

SweepDefinition sweep_from_text(const std::string& text, const std::string& file) {
  const OrderedJson root = luwu::parse_json_document<OrderedJson>(text, file);
  if (!root.is_object()) throw InputError(file, "$", std::string("expected an object, found ") + root.type_name());
  SweepDefinition sweep;
  sweep.origin = file;
  const bool is_sweep = root.contains("base") || root.contains("axes");
  if (!is_sweep) {
    sweep.base = luwu::Json::parse(root.dump());
    sweep.base_file = file;
    return sweep;
  }
  // Strict keys, with the same messages as every other input file.
  const luwu::Json plain = luwu::Json::parse(root.dump());
  JsonNode node(plain, file);
  node.only_keys({"description", "base", "axes"});
  JsonNode base = node.at("base");
  if (base.is_string()) {
    std::filesystem::path path = base.as_string();
    if (path.is_relative()) path = std::filesystem::path(file).parent_path() / path;
    sweep.base_file = path.lexically_normal().string();
    std::error_code error;  // refused at the field that names it
    if (!std::filesystem::exists(sweep.base_file, error)) base.fail("no such file: " + sweep.base_file);
    sweep.base = load_json_file(sweep.base_file);
  } else {
    base.expect_object();
    sweep.base = base.raw();
    sweep.base_file = file;
  }
  if (root.contains("axes")) {
    const OrderedJson& axes = root.at("axes");
    if (!axes.is_object()) node.at("axes").fail("expected an object {\"key\": [values...]}");
    for (auto it = axes.begin(); it != axes.end(); ++it) {
      JsonNode values = node.at("axes").at(it.key());
      if (!values.is_array() || values.size() == 0) values.fail("expected a non-empty array of values");
      SweepAxis axis{it.key(), {}};
      for (const auto& part : split_key(axis.key))
        if (part.empty()) values.fail("empty part in the key \"" + axis.key + "\"");
      for (const auto& v : it.value()) axis.values.push_back(luwu::Json::parse(v.dump()));
      sweep.axes.push_back(std::move(axis));
    }
  }
  return sweep;
}

SweepDefinition load_sweep_definition(const std::string& file) {
  require_input_file(file, "sweep or scenario JSON file");  // a device or a FIFO is never read
  std::ifstream in(file);
  if (!in) throw InputError(file, "", "cannot open file");
  std::stringstream buf;
  buf << in.rdbuf();
  return sweep_from_text(buf.str(), file);
}

void apply_setting(luwu::Json& scenario, const std::string& key, const luwu::Json& value, const std::string& origin) {
  const auto parts = split_key(key);
  luwu::Json* node = &scenario;
  std::string walked;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    const std::string& part = parts[i];
    const bool last = i + 1 == parts.size();
    luwu::Json* next = nullptr;
    if (node->is_array()) {
      if (!is_index(part) || std::stoul(part) >= node->size())
        throw InputError(origin, "", fmt::format("key \"{}\": {} is a list of {}, \"{}\" is not an index into it", key,
                                                 walked, node->size(), part));
      next = &(*node)[std::stoul(part)];
    } else if (node->is_object() || node->is_null()) {  // null: an object this path created
      next = &(*node)[part];  // created when missing; scenario parsing rejects names it does not know
    } else {
      throw InputError(origin, "", fmt::format("key \"{}\": {} is a {}, not an object with a field \"{}\"", key,
                                               walked, node->type_name(), part));
    }
    walked += (walked.empty() ? "" : ".") + part;
    if (last) {
      const bool single_system = key == "systems" && (value.is_string() || value.is_object());
      *next = single_system ? luwu::Json::array({value}) : value;
    }
    node = next;
  }
}

std::vector<SweepPoint> expand_sweep(const SweepDefinition& sweep) {
  std::size_t total = 1;
  for (const auto& a : sweep.axes) {
    if (a.values.empty()) throw InputError(sweep.origin, "", "axis \"" + a.key + "\" has no values");
    total *= a.values.size();
    if (total > kMaxSweepPoints)
      throw InputError(sweep.origin, "", fmt::format("more than {} points; split the sweep into several files", kMaxSweepPoints));
  }
  // Every point holds its own scenario: bound the memory that takes before taking it (a parsed
  // value costs several times its text; 8x is what nlohmann's objects took here).
  const double point_bytes = 8.0 * static_cast<double>(sweep.base.dump().size() + 256);
  if (point_bytes * static_cast<double>(total) > kMaxSweepExpansionBytes)
    throw InputError(sweep.origin, "",
                     fmt::format("{} points of a {:.0f} KB scenario would take about {:.1f} GB in memory (at most {:.0f} GB); "
                                 "split the sweep into several files",
                                 total, point_bytes / 8 / 1e3, point_bytes * static_cast<double>(total) / 1e9,
                                 kMaxSweepExpansionBytes / 1e9));
  std::vector<SweepPoint> points;
  points.reserve(total);
  std::vector<std::size_t> digit(sweep.axes.size(), 0);  // odometer, last axis fastest
  for (std::size_t n = 0; n < total; ++n) {
    SweepPoint p;
    p.index = static_cast<int>(n);
    p.scenario = sweep.base;
    for (std::size_t a = 0; a < sweep.axes.size(); ++a) {
      const auto& value = sweep.axes[a].values[digit[a]];
      p.settings.emplace_back(sweep.axes[a].key, value);
      apply_setting(p.scenario, sweep.axes[a].key, value, sweep.origin);
    }
    // The point's own description: the base's says what the base is, not what the axes changed.
    const bool described = std::any_of(sweep.axes.begin(), sweep.axes.end(), [](const SweepAxis& a) { return a.key == "description"; });
    if (!sweep.axes.empty() && !described && p.scenario.is_object()) {
      const auto base = p.scenario.find("description");
      const std::string before = base != p.scenario.end() && base->is_string() ? base->get<std::string>() : "";
      p.scenario["description"] = (before.empty() ? "" : before + " ") + "[sweep point " + std::to_string(n) + ": " +
                                  describe_settings(p) + "]";
    }
    p.id = fmt::format("{}-{:016x}", n, fnv1a_64(p.scenario.dump()));
    points.push_back(std::move(p));
    for (std::size_t a = sweep.axes.size(); a-- > 0;) {
      if (++digit[a] < sweep.axes[a].values.size()) break;
      digit[a] = 0;
    }
  }
  return points;
}

std::string settings_json_text(const SweepPoint& point) {
  std::string out = "{";
  for (std::size_t i = 0; i < point.settings.size(); ++i) {
    if (i) out += ",";
    out += luwu::Json(point.settings[i].first).dump() + ":" + point.settings[i].second.dump();
  }
  return out + "}";
}

std::string describe_settings(const SweepPoint& point) {
  std::string out;
  for (const auto& [key, value] : point.settings) {
    if (!out.empty()) out += ", ";
    out += key + "=" + (value.is_string() ? value.get<std::string>() : value.dump());
  }
  return out.empty() ? "the base scenario" : out;
}

void validate_sweep(const SweepDefinition& sweep, const std::vector<SweepPoint>& points) {
  for (const auto& p : points) {
    try {
      (void)scenario_from_json(JsonNode(p.scenario, sweep.base_file));
    } catch (const InputError& e) {
      throw InputError(sweep.origin, "", fmt::format("sweep point {} ({}): {}", p.index, describe_settings(p), e.what()));
    } catch (const std::invalid_argument& e) {
      throw InputError(sweep.origin, "", fmt::format("sweep point {} ({}): {}", p.index, describe_settings(p), e.what()));
    }
  }
}

}  // namespace luwu::sim
