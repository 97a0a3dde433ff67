#pragma once
// Predictions held against measured iteration times (`luwusim compare`).  A measurements file
// names, per row, a scenario file (relative to the measurements file), a system (its label in the
// scenario) and what was measured: iteration_time_s and optionally the breakdown (compute_s,
// exposed_communication_s, exposed_optimizer_s, io_stall_s) and tokens_per_s.  As CSV, a header
// with those column names (blank = not measured); as JSON, {"measurements": [{"scenario",
// "system", "iteration_time_s", ...}], "note": "..."}.  docs/compare.md has examples.
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/json_input.hpp"

namespace luwu::sim {

struct Measurement {
  std::string scenario_file;  // as resolved against the measurements file
  std::string system;
  std::map<std::string, double> values;  // field -> measured value
  std::string origin_file;               // the measurements file, and where in it the row is:
  std::string origin_row;                // "line 3" or "$.measurements[2]", for errors
};

// The fields a measurement may give, in table order.
const std::vector<std::string>& comparable_fields();

// InputError naming the file and the line or JSON path of a bad row.
std::vector<Measurement> load_measurements(const std::string& file);

struct Comparison {
  std::string scenario_file, system, field;
  double measured = 0;
  double predicted = 0;
  double relative_error = 0;  // predicted / measured - 1
  std::string problem;        // "" when predicted; else why not (the system does not run, ...)
};

// Simulates each scenario once, with the systems its rows name.
std::vector<Comparison> compare_with_predictions(const std::vector<Measurement>& measurements,
                                                 const std::function<void(const std::string&)>& progress = nullptr);

luwu::Json comparisons_to_json(const std::vector<Comparison>& rows);
std::string comparisons_to_csv(const std::vector<Comparison>& rows);
// A table with the error per row and the mean absolute error per field.
std::string comparisons_to_table(const std::vector<Comparison>& rows);

}  // namespace luwu::sim
