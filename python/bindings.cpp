// luwusim._luwusim: the experiment layer for Python.  Scenarios and results cross as JSON text,
// so Python sees exactly what `luwusim run --json` prints; luwusim/__init__.py wraps it in dicts
// and pandas DataFrames.  Input errors become ValueError with the file and JSON path.
#include <csignal>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "common/input_error.hpp"
#include "common/json_input.hpp"
#include "sim/experiment/run_scenario.hpp"
#include "sim/experiment/scenario.hpp"
#include "sim/experiment/sweep.hpp"
#include "sim/experiment/sweep_results.hpp"
#include "sim/experiment/sweep_runner.hpp"

namespace py = pybind11;

namespace {

luwu::sim::ScenarioRun run(const std::string& scenario_json, const std::string& origin,
                           const std::vector<std::string>& systems) {
  const luwu::Json j = luwu::parse_json_text(scenario_json, origin);
  const auto scenario = luwu::sim::scenario_from_json(luwu::JsonNode(j, origin));
  luwu::sim::RunOptions options;
  options.only_systems = systems;
  py::gil_scoped_release unlocked;  // simulations run in child processes; Python may go on
  return luwu::sim::run_scenario(scenario, options);
}

// Runs the sweep into `output` (JSON Lines, resumable as `luwusim sweep --resume`) and returns
// its CSV.  `progress` (None, or a callable) gets {"done", "total", "failed", "running",
// "elapsed_s"} at the start and whenever a point finishes.
std::string sweep_csv(const std::string& base_json, const std::string& origin,
                      const std::vector<std::pair<std::string, std::vector<std::string>>>& axes, int jobs,
                      const std::string& output, bool resume, const py::object& progress) {
  luwu::sim::SweepDefinition sweep;
  sweep.base = luwu::parse_json_text(base_json, origin);
  sweep.base_file = origin;
  sweep.origin = "luwusim.sweep";
  for (const auto& [key, values] : axes) {
    luwu::sim::SweepAxis axis{key, {}};
    for (const auto& v : values) axis.values.push_back(luwu::parse_json_text(v, "axis " + key));
    luwu::sim::set_axis(sweep, axis);
  }
  const auto points = luwu::sim::expand_sweep(sweep);
  luwu::sim::validate_sweep(sweep, points);
  luwu::sim::SweepRunOptions options;
  options.output = output;
  options.jobs = jobs;
  options.resume = resume;
  options.overwrite = !resume;
  if (!progress.is_none()) {
    auto last_done = std::make_shared<int>(-1);
    options.progress = [progress, last_done](const luwu::sim::SweepProgress& p) {
      if (p.done == *last_done) return;  // once per finished point, not every second
      *last_done = p.done;
      py::gil_scoped_acquire locked;  // the sweep runs with the GIL released
      progress(py::dict(py::arg("done") = p.done, py::arg("total") = p.total, py::arg("failed") = p.failed,
                        py::arg("running") = p.running, py::arg("elapsed_s") = p.elapsed_s));
    };
  }
  luwu::sim::SweepRunSummary summary;
  {
    py::gil_scoped_release unlocked;
    summary = luwu::sim::run_sweep(sweep, points, options);
  }
  // A sweep stopped by Ctrl-C is not a result: what finished is in `output` (resumable), and Python
  // gets its KeyboardInterrupt, never a partial frame.
  if (summary.interrupted_by == SIGINT) {
    PyErr_SetNone(PyExc_KeyboardInterrupt);
    throw py::error_already_set();
  }
  if (summary.interrupted_by != 0)
    throw std::runtime_error("the sweep was stopped by signal " + std::to_string(summary.interrupted_by) +
                             "; the points that finished are in " + output);
  return luwu::sim::sweep_results_to_csv(luwu::sim::read_sweep_lines(output));
}

}  // namespace

PYBIND11_MODULE(_luwusim, m) {
  m.doc() = "luwusim's experiment layer (use the luwusim package, not this module)";
  py::register_exception<luwu::InputError>(m, "InputError", PyExc_ValueError);
  m.def(
      "run_json",
      [](const std::string& scenario, const std::string& origin, const std::vector<std::string>& systems) {
        return luwu::sim::run_to_json(run(scenario, origin, systems)).dump();
      },
      py::arg("scenario_json"), py::arg("origin"), py::arg("systems"));
  m.def(
      "run_csv",
      [](const std::string& scenario, const std::string& origin, const std::vector<std::string>& systems) {
        return luwu::sim::run_to_csv(run(scenario, origin, systems));
      },
      py::arg("scenario_json"), py::arg("origin"), py::arg("systems"));
  m.def("sweep_csv", &sweep_csv, py::arg("base_json"), py::arg("origin"), py::arg("axes"), py::arg("jobs"),
        py::arg("output"), py::arg("resume"), py::arg("progress") = py::none());
}
