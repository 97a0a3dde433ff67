#include "sim/experiment/sweep_runner.hpp"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <deque>
#include <poll.h>
#include <stdexcept>
#include <unistd.h>

#include <fmt/format.h>

#include "sim/experiment/isolated_run.hpp"
#include "sim/experiment/run_scenario.hpp"
#include "sim/experiment/scenario.hpp"
#include "sim/experiment/sweep_results.hpp"

namespace luwu::sim {
namespace {

volatile std::sig_atomic_t g_stop_signal = 0;
extern "C" void on_stop_signal(int sig) { g_stop_signal = sig; }

// SIGINT/SIGTERM set a flag for the loop (poll returns EINTR) while run_sweep runs.
class StopSignals {
 public:
  StopSignals() {
    g_stop_signal = 0;
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0;  // no SA_RESTART: poll() wakes up
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
  }
  ~StopSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
  }

 private:
  struct sigaction old_int_ {};
  struct sigaction old_term_ {};
};

struct RunningPoint {
  IsolatedChild child;
  std::size_t point;
};

// The child leads its own process group (the simulation processes it forks join it), so the
// sweep can kill a point whole, and a terminal's Ctrl-C reaches only the sweep, which decides.
RunningPoint start_point(const SweepDefinition& sweep, const SweepPoint& point, std::size_t which,
                         const std::function<ScenarioRun(const Scenario&)>& run_system) {
  auto run = [&sweep, &point, &run_system] {
    std::signal(SIGINT, SIG_DFL);  // the sweep's handlers only set a flag nobody reads here
    std::signal(SIGTERM, SIG_DFL);
    return simulate_point(sweep, point, run_system).dump();
  };
  return {IsolatedChild::start(run, {.label = "point process", .own_process_group = true}), which};
}

}  // namespace

int default_jobs() {
  long n = ::sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<int>(n) : 1;
}

Shard parse_shard(const std::string& text) {
  auto slash = text.find('/');
  auto bad = [&]() -> Shard { throw std::invalid_argument("--shard " + text + ": expected i/n with 0 <= i < n"); };
  if (slash == std::string::npos) return bad();
  const std::string i = text.substr(0, slash), n = text.substr(slash + 1);
  auto digits = [](const std::string& s) {
    return !s.empty() && s.size() < 9 && s.find_first_not_of("0123456789") == std::string::npos;
  };
  if (!digits(i) || !digits(n)) return bad();
  Shard s{std::stoi(i), std::stoi(n)};
  if (s.count < 1 || s.index >= s.count) return bad();
  return s;
}

luwu::Json simulate_point(const SweepDefinition& sweep, const SweepPoint& point,
                          const std::function<ScenarioRun(const Scenario&)>& run_system) {
  const Scenario scenario = scenario_from_json(JsonNode(point.scenario, sweep.base_file));
  luwu::Json summary;
  luwu::Json results = luwu::Json::array();
  std::string errors, crashes;
  for (const auto& system : scenario.systems) {
    Scenario one = scenario;
    one.systems = {system};
    try {
      const auto run = run_system ? run_system(one) : run_scenario(one, RunOptions{});
      if (summary.is_null()) summary = run.summary;
      results.push_back(result_to_json(run.results.at(0)));
    } catch (const std::exception& e) {
      results.push_back({{"system", system->label()}, {"error", e.what()}});
      errors += (errors.empty() ? "" : "; ") + system->label() + ": " + e.what();
      if (dynamic_cast<const ProcessCrashed*>(&e))
        crashes += (crashes.empty() ? "" : "; ") + system->label() + ": " + e.what();
    }
  }
  if (summary.is_null()) throw std::runtime_error("no system could be simulated (" + errors + ")");
  luwu::Json out = {{"scenario", summary}, {"results", results}};
  if (!crashes.empty()) out["error"] = "a simulation crashed (" + crashes + ")";
  return out;
}

SweepRunSummary run_sweep(const SweepDefinition& sweep, const std::vector<SweepPoint>& points,
                          const SweepRunOptions& options) {
  if (options.resume && options.overwrite) throw std::invalid_argument("--resume and --overwrite exclude each other");
  const OpenResults mode = options.resume      ? OpenResults::Resume
                           : options.overwrite ? OpenResults::Overwrite
                                               : OpenResults::Fresh;
  SweepResultsFile file(options.output, mode, options.warn);

  SweepRunSummary summary;
  summary.points = static_cast<int>(points.size());
  const auto done_ids = file.existing_ids();
  std::set<std::string> sweep_ids;
  std::deque<std::size_t> queue;
  for (std::size_t i = 0; i < points.size(); ++i) {
    sweep_ids.insert(points[i].id);
    if (!options.shard.contains(points[i].index)) continue;
    ++summary.in_shard;
    if (done_ids.count(points[i].id)) ++summary.already_done;
    else queue.push_back(i);
  }
  int foreign = 0;
  for (const auto& id : done_ids) foreign += sweep_ids.count(id) ? 0 : 1;
  if (foreign > 0 && !options.allow_mixed)
    throw std::invalid_argument(fmt::format(
        "{}: {} of its {} results belong to a different sweep (another base or axes), so this sweep cannot resume "
        "there: use another -o file, --overwrite to start again, or --allow-mixed to keep them beside this sweep's",
        options.output, foreign, done_ids.size()));
  if (foreign > 0 && options.warn)
    options.warn(fmt::format("{}: {} results are not points of this sweep (another base or axes); kept as they are",
                             options.output, foreign));

  const int jobs = options.jobs > 0 ? options.jobs : default_jobs();
  SweepProgress progress;
  progress.total = static_cast<int>(queue.size());
  const auto started = std::chrono::steady_clock::now();
  auto report = [&] {
    if (!options.progress) return;
    progress.elapsed_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
    options.progress(progress);
  };

  StopSignals stop_signals;
  std::vector<RunningPoint> running;
  report();
  while ((!queue.empty() || !running.empty()) && g_stop_signal == 0) {
    while (static_cast<int>(running.size()) < jobs && !queue.empty()) {
      running.push_back(start_point(sweep, points[queue.front()], queue.front(), options.run_system));
      queue.pop_front();
    }
    progress.running = static_cast<int>(running.size());
    std::vector<pollfd> fds;
    for (const auto& r : running) fds.push_back({r.child.fd(), POLLIN, 0});
    int ready = ::poll(fds.data(), fds.size(), 1000);
    if (ready < 0 && errno != EINTR) throw std::runtime_error("poll failed");
    if (ready <= 0) {
      report();
      continue;
    }
    std::vector<RunningPoint> still;
    for (std::size_t k = 0; k < running.size(); ++k) {
      RunningPoint& r = running[k];
      if (!(fds[k].revents & (POLLIN | POLLHUP | POLLERR)) || r.child.read_available()) {
        still.push_back(std::move(r));
        continue;
      }
      // End of output: the point is done, one way or another.
      const IsolatedResult result = r.child.finish();
      const SweepPoint& point = points[r.point];
      std::string line;
      bool failed = true;
      if (result.ok) {
        try {
          const auto run_json = luwu::Json::parse(result.output);
          line = sweep_result_line(point, run_json);
          // A system whose simulation crashed or raised fails the point: its result is not a result.
          failed = run_json.contains("error");
          if (run_json.contains("results") && run_json["results"].is_array())
            for (const auto& system : run_json["results"])
              if (system.is_object() && system.contains("error")) failed = true;
        } catch (const std::exception& e) {
          line = sweep_error_line(point, std::string("unreadable result: ") + e.what());
        }
      } else {
        line = sweep_error_line(point, result.output);
      }
      file.append(line);
      ++summary.ran;
      ++progress.done;
      if (failed) ++summary.failed, ++progress.failed;
      // The next point takes the freed process at once, so the progress line counts it running.
      if (!queue.empty()) {
        still.push_back(start_point(sweep, points[queue.front()], queue.front(), options.run_system));
        queue.pop_front();
      }
      progress.running = static_cast<int>(running.size() - k - 1 + still.size());
      report();
    }
    running = std::move(still);
  }

  if (g_stop_signal != 0) {
    summary.interrupted_by = g_stop_signal;
    for (auto& r : running) r.child.kill();  // every group first, then reap them one by one
    running.clear();
  }
  progress.running = 0;
  report();
  return summary;
}

}  // namespace luwu::sim
