#pragma once
// A sweep: a base scenario and axes, each a dotted key into the scenario JSON ("cluster.workers",
// "training.micro_batch", "systems") with the values it takes.  Its points are the cartesian
// product of the axes, the first axis varying slowest (as nested loops written in axis order).
//
// A sweep file:
//   {"base": "../small.json" | {inline scenario},
//    "axes": {"cluster.workers": [4, 8], "model": ["gpt3-125m", "gpt3-350m"], "systems": [["ddp"], ["zero3"]]}}
// Axes keep the file's order.  A relative base path is resolved against the sweep file's folder;
// relative paths inside the scenario (topology_file) against the base scenario's folder.
//
// Each point has a stable id, "<index>-<hash>": its position in the product and a 64-bit FNV-1a
// hash of the scenario it generates, so a changed base or axis never matches an old result.
#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/json_input.hpp"

namespace luwu::sim {

struct SweepAxis {
  std::string key;  // dotted path; numeric parts index arrays ("systems.0.prefetch_layers")
  std::vector<luwu::Json> values;
};

struct SweepDefinition {
  luwu::Json base = luwu::Json::object();  // the base scenario
  std::string base_file;  // names errors in the scenario and anchors its relative paths
  std::string origin;     // where the axes come from: the sweep file, or "--set"
  std::vector<SweepAxis> axes;
};

struct SweepPoint {
  int index = 0;
  std::string id;
  std::vector<std::pair<std::string, luwu::Json>> settings;  // in axis order
  luwu::Json scenario;  // the base with the settings applied
};

// "key=v1,v2,...": values split at top-level commas (outside brackets and quotes); each value is
// JSON when it parses as JSON (8, true, ["ddp"]) and a string otherwise (100Gb/s, gpt3-13b).
// std::invalid_argument on a malformed option.
SweepAxis parse_set_option(const std::string& text);

// A file with "base" or "axes" is a sweep file ({"description", "base", "axes"}); any other JSON
// object is a scenario, a sweep of one point until axes are added.  The text is parsed keeping
// the order of "axes".
SweepDefinition load_sweep_definition(const std::string& file);
SweepDefinition sweep_from_text(const std::string& text, const std::string& file);

// Adds an axis, or replaces the axis with the same key (a --set overrides a sweep file's axis).
void set_axis(SweepDefinition& sweep, SweepAxis axis);

// Sets `key` in `scenario` to `value`, creating missing objects on the way.  A "systems" value
// that is a single system (a string or an object) becomes a one-system list.  InputError naming
// the key when the path runs through a value that is neither an object nor an array.
void apply_setting(luwu::Json& scenario, const std::string& key, const luwu::Json& value, const std::string& origin);

// A sweep has at most this many points, and its expanded points (each with its own scenario) take
// at most about this much memory, estimated from the base scenario before expanding.
inline constexpr std::size_t kMaxSweepPoints = 1'000'000;
inline constexpr double kMaxSweepExpansionBytes = 4e9;

// The cartesian product, in order, with ids; nothing validated.  InputError past the caps above.
// Each point's scenario gets its own description: the base's, then "[sweep point N: key=value,
// ...]" (unless an axis sets "description" itself).
std::vector<SweepPoint> expand_sweep(const SweepDefinition& sweep);

// Parses every point's scenario as `luwusim run` would (sim::scenario_from_json); the first bad
// point is an InputError naming the point, its settings, and the scenario's own error (an unknown
// key shows up there as "unknown field").
void validate_sweep(const SweepDefinition& sweep, const std::vector<SweepPoint>& points);

// {"key": value, ...} in axis order, as compact JSON text (nlohmann::json objects sort their keys).
std::string settings_json_text(const SweepPoint& point);
std::string describe_settings(const SweepPoint& point);  // "cluster.workers=8, model=gpt3-125m"

std::uint64_t fnv1a_64(const std::string& text);

}  // namespace luwu::sim
