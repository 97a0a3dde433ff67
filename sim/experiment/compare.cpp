#include "sim/experiment/compare.hpp"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "common/csv.hpp"
#include "common/input_error.hpp"
#include "sim/experiment/run_scenario.hpp"
#include "sim/experiment/scenario.hpp"

namespace luwu::sim {
namespace {

std::string resolved(const std::string& measurements_file, const std::string& scenario) {
  const std::filesystem::path p(scenario);
  if (p.is_absolute()) return scenario;
  return (std::filesystem::path(measurements_file).parent_path() / p).lexically_normal().string();
}

// Above these a value is a slip (a unit, an exponent), not a measurement of one iteration: 1e7 s
// is 116 days; 1e12 tokens/s is a million times a large cluster's rate.
constexpr double kMaxMeasuredSeconds = 1e7;
constexpr double kMaxMeasuredTokensPerSecond = 1e12;

// Empty when v is a plausible measurement of `field`, else why not.
std::string implausible(const std::string& field, double v) {
  const double max = field == "tokens_per_s" ? kMaxMeasuredTokensPerSecond : kMaxMeasuredSeconds;
  if (!(v > 0) || !std::isfinite(v)) return fmt::format("expected a positive measured value, found {}", v);
  if (v > max) return fmt::format("{} is not a measurement of one iteration (at most {:g} here)", v, max);
  return "";
}

double positive(const std::string& file, const std::string& where, const std::string& field, double v) {
  if (const std::string why = implausible(field, v); !why.empty()) throw InputError(file, where, field + ": " + why);
  return v;
}

// The scenario a row names must be there; refused at the row, not later where it is loaded.
void require_scenario_file(const std::string& scenario, const std::string& file, const std::string& where) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(scenario, error))
    throw InputError(file, where, "no scenario file " + scenario + " (a row's scenario is relative to this file)");
}

std::vector<Measurement> from_csv(const std::string& file) {
  require_input_file(file, "CSV file");  // not a device, a FIFO or an oversized file
  std::ifstream in(file);
  if (!in) throw InputError(file, "", "cannot open file");
  std::string line;
  int n = 0;
  // Lines starting with # are comments (pandas: read_csv(comment="#")).
  auto next = [&] {
    while (std::getline(in, line)) {
      ++n;
      if (!line.empty() && line[0] == '#') continue;
      return true;
    }
    return false;
  };
  if (!next()) throw InputError(file, "line 1", "empty file: expected a header");
  const std::string header_line = "line " + std::to_string(n);
  const auto header = csv_record_at(file, n, line);
  auto column = [&](const std::string& name) -> long {
    for (std::size_t c = 0; c < header.size(); ++c)
      if (header[c] == name) return static_cast<long>(c);
    return -1;
  };
  for (const char* required : {"scenario", "system"})
    if (column(required) < 0) throw InputError(file, header_line, std::string("the header has no \"") + required + "\" column");
  for (const auto& h : header)
    if (h != "scenario" && h != "system" && std::find(comparable_fields().begin(), comparable_fields().end(), h) ==
                                                 comparable_fields().end())
      throw InputError(file, header_line, "unknown column \"" + h + "\"; measured fields are " +
                                           fmt::format("{}", fmt::join(comparable_fields(), ", ")));
  std::vector<Measurement> out;
  while (next()) {
    if (line.empty() || line == "\r") continue;
    const auto rec = csv_record_at(file, n, line);
    const std::string where = "line " + std::to_string(n);
    if (rec.size() != header.size())
      throw InputError(file, where, fmt::format("{} fields where the header has {}", rec.size(), header.size()));
    Measurement m;
    m.scenario_file = resolved(file, rec[column("scenario")]);
    m.system = rec[column("system")];
    m.origin_file = file;
    m.origin_row = where;
    if (rec[column("scenario")].empty() || m.system.empty()) throw InputError(file, where, "scenario and system are required");
    for (const auto& f : comparable_fields()) {
      const long c = column(f);
      if (c < 0 || rec[c].empty()) continue;
      std::size_t end = 0;
      double v = 0;
      try {
        v = std::stod(rec[c], &end);
      } catch (const std::exception&) {
        end = 0;
      }
      if (end != rec[c].size()) throw InputError(file, where, f + ": expected a number, found \"" + rec[c] + "\"");
      m.values[f] = positive(file, where, f, v);
    }
    if (m.values.empty()) throw InputError(file, where, "no measured value");
    require_scenario_file(m.scenario_file, file, where + ": scenario");
    out.push_back(std::move(m));
  }
  return out;
}

std::vector<Measurement> from_json(const std::string& file) {
  const Json j = load_json_file(file);
  const JsonNode root(j, file);
  root.only_keys({"measurements", "note", "description"});
  const JsonNode list = root.at("measurements");
  if (!list.is_array() || list.raw().empty()) list.fail("expected a non-empty array of measurements");
  std::vector<Measurement> out;
  for (std::size_t i = 0; i < list.raw().size(); ++i) {
    const JsonNode row = list.at(i);
    std::vector<std::string> keys = {"scenario", "system", "note"};
    keys.insert(keys.end(), comparable_fields().begin(), comparable_fields().end());
    row.only_keys(keys);
    Measurement m;
    m.scenario_file = resolved(file, row.at("scenario").as_string());
    m.system = row.at("system").as_string();
    m.origin_file = file;
    m.origin_row = row.path();
    for (const auto& f : comparable_fields())
      if (row.has(f)) {
        m.values[f] = row.at(f).as_positive();
        if (const std::string why = implausible(f, m.values[f]); !why.empty()) row.at(f).fail(why);
      }
    if (m.values.empty()) row.fail("no measured value (give iteration_time_s or a breakdown field)");
    require_scenario_file(m.scenario_file, file, row.at("scenario").path());
    out.push_back(std::move(m));
  }
  return out;
}

double predicted_value(const SystemResult& r, const std::string& field) {
  if (field == "iteration_time_s") return r.iteration_time_s;
  if (field == "tokens_per_s") return r.tokens_per_s;
  if (field == "compute_s") return r.breakdown.compute_s;
  if (field == "exposed_communication_s") return r.breakdown.exposed_communication_s;
  if (field == "exposed_optimizer_s") return r.breakdown.exposed_optimizer_s;
  return r.breakdown.io_stall_s;  // io_stall_s
}

}  // namespace

const std::vector<std::string>& comparable_fields() {
  static const std::vector<std::string> fields = {"iteration_time_s",   "tokens_per_s",
                                                  "compute_s",          "exposed_communication_s",
                                                  "exposed_optimizer_s", "io_stall_s"};
  return fields;
}

std::vector<Measurement> load_measurements(const std::string& file) {
  require_input_file(file, "measurements file (.csv or .json)");  // before its name is judged
  const auto ext = std::filesystem::path(file).extension().string();
  if (ext == ".csv") return from_csv(file);
  if (ext == ".json") return from_json(file);
  throw InputError(file, "", "expected a .csv or .json measurements file");
}

std::vector<Comparison> compare_with_predictions(const std::vector<Measurement>& measurements,
                                                 const std::function<void(const std::string&)>& progress) {
  // Each scenario once, in the order first named.
  std::vector<std::string> scenarios;
  for (const auto& m : measurements)
    if (std::find(scenarios.begin(), scenarios.end(), m.scenario_file) == scenarios.end())
      scenarios.push_back(m.scenario_file);
  std::map<std::string, ScenarioRun> runs;
  for (const auto& file : scenarios) {
    const Scenario scenario = load_scenario(file);
    RunOptions options;
    for (const auto& m : measurements)
      if (m.scenario_file == file) {
        bool known = false;
        for (const auto& s : scenario.systems) known = known || s->label() == m.system;
        if (!known)
          throw InputError(m.origin_file, m.origin_row + ": system", "\"" + m.system + "\" is not a system label of " + file);
        options.only_systems.push_back(m.system);
      }
    options.progress = progress;
    runs.emplace(file, run_scenario(scenario, options));
  }
  std::vector<Comparison> out;
  for (const auto& m : measurements) {
    const auto& run = runs.at(m.scenario_file);
    const SystemResult* result = nullptr;
    for (const auto& r : run.results)
      if (r.system == m.system) result = &r;
    for (const auto& f : comparable_fields()) {
      if (!m.values.count(f)) continue;
      Comparison c{m.scenario_file, m.system, f, m.values.at(f), 0, 0, ""};
      if (!result || !result->feasible) {
        c.problem = result ? result->reason : "not simulated";
      } else {
        c.predicted = predicted_value(*result, f);
        c.relative_error = c.predicted / c.measured - 1;
      }
      out.push_back(c);
    }
  }
  return out;
}

luwu::Json comparisons_to_json(const std::vector<Comparison>& rows) {
  luwu::Json out = luwu::Json::array();
  for (const auto& c : rows) {
    luwu::Json j = {{"scenario", c.scenario_file}, {"system", c.system}, {"field", c.field}, {"measured", c.measured}};
    if (c.problem.empty()) {
      j["predicted"] = c.predicted;
      j["relative_error"] = c.relative_error;
    } else {
      j["problem"] = c.problem;
    }
    out.push_back(j);
  }
  return out;
}

std::string comparisons_to_csv(const std::vector<Comparison>& rows) {
  std::string out = "scenario,system,field,measured,predicted,relative_error,problem\n";
  for (const auto& c : rows) {
    CsvRow row;
    row.add(c.scenario_file);
    row.add(c.system);
    row.add(c.field);
    row.add(luwu::Json(c.measured));
    if (c.problem.empty()) {
      row.add(luwu::Json(c.predicted));
      row.add(luwu::Json(c.relative_error));
    } else {
      row.add_blanks(2);
    }
    row.add(c.problem);
    out += row.line();
  }
  return out;
}

std::string comparisons_to_table(const std::vector<Comparison>& rows) {
  std::string out = fmt::format("{:<34} {:<22} {:<24} {:>12} {:>12} {:>8}\n", "scenario", "system", "field", "measured",
                                "predicted", "error");
  std::map<std::string, std::pair<double, int>> by_field;  // sum of |error|, count
  for (const auto& c : rows) {
    const std::string name = std::filesystem::path(c.scenario_file).filename().string();
    if (!c.problem.empty()) {
      out += fmt::format("{:<34} {:<22} {:<24} {:>12.6g} {}\n", name, c.system, c.field, c.measured, c.problem);
      continue;
    }
    out += fmt::format("{:<34} {:<22} {:<24} {:>12.6g} {:>12.6g} {:>+7.1f}%\n", name, c.system, c.field, c.measured,
                       c.predicted, 100 * c.relative_error);
    auto& [sum, n] = by_field[c.field];
    sum += std::abs(c.relative_error);
    ++n;
  }
  out += "\nmean absolute error:";
  for (const auto& f : comparable_fields())
    if (by_field.count(f)) out += fmt::format(" {} {:.1f}% ({})", f, 100 * by_field[f].first / by_field[f].second, by_field[f].second);
  return out + "\nerror = predicted / measured - 1; units: seconds (_s), tokens per second (tokens_per_s)\n";
}

}  // namespace luwu::sim
