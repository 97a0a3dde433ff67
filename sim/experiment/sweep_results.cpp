#include "sim/experiment/sweep_results.hpp"

#include "sim/experiment/run_scenario.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/csv.hpp"
#include "common/input_error.hpp"
#include "sim/experiment/result.hpp"

#include <fmt/format.h>

namespace luwu::sim {
namespace {

std::string line_head(const SweepPoint& point) {
  return fmt::format("{{\"id\":{},\"index\":{},\"point\":{},\"input\":{}", luwu::Json(point.id).dump(), point.index,
                     settings_json_text(point), point.scenario.dump());
}

// A results file is a regular file (or none yet): a device or FIFO would be read without end.
void require_regular_or_absent(const std::string& path) {
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (!std::filesystem::exists(st)) return;
  if (std::filesystem::is_directory(st)) throw luwu::InputError(path, "", "is a directory, not a results file");
  if (!std::filesystem::is_regular_file(st))
    throw luwu::InputError(path, "", "is not a regular file (a device or a pipe); sweep results go to a file");
}

std::string read_all(const std::string& path, bool* exists) {
  require_regular_or_absent(path);
  std::ifstream in(path, std::ios::binary);
  *exists = static_cast<bool>(in);
  if (!in) return {};
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

[[noreturn]] void system_error(const std::string& path, const std::string& what) {
  throw std::runtime_error(path + ": " + what + ": " + std::strerror(errno));
}

luwu::Json get_or_null(const luwu::Json& j, const std::string& key) {
  return j.is_object() && j.contains(key) ? j.at(key) : luwu::Json();
}

}  // namespace

std::string sweep_result_line(const SweepPoint& point, const luwu::Json& run_json) {
  // "error" beside the results: the point failed (a system's simulation crashed), its other
  // systems' results are kept.
  const std::string error = run_json.contains("error") ? ",\"error\":" + run_json.at("error").dump() : "";
  return fmt::format("{},\"scenario\":{},\"results\":{}{}}}", line_head(point), run_json.at("scenario").dump(),
                     run_json.at("results").dump(), error);
}

std::string sweep_error_line(const SweepPoint& point, const std::string& error) {
  return fmt::format("{},\"error\":{}}}", line_head(point), luwu::Json(error).dump());
}

std::vector<SweepLine> read_sweep_lines(const std::string& path, std::size_t* partial_bytes) {
  bool exists = false;
  const std::string content = read_all(path, &exists);
  std::vector<SweepLine> lines;
  std::size_t start = 0;
  int number = 0;
  while (start < content.size()) {
    std::size_t end = content.find('\n', start);
    if (end == std::string::npos) break;  // a partial last line
    ++number;
    std::string text = content.substr(start, end - start);
    start = end + 1;
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = "line " + std::to_string(number);
    SweepLine line;
    try {
      require_json_bounds(text, path);
      line.json = luwu::Json::parse(text);
    } catch (const InputError&) {
      throw InputError(path, where,
                       "JSON nested more than " + std::to_string(kMaxJsonNestingDepth) + " levels deep or of more than " +
                           std::to_string(kMaxJsonValues / 1'000'000) + " million values");
    } catch (const luwu::Json::parse_error& e) {
      throw InputError(path, where, std::string("not valid JSON: ") + e.what());
    }
    if (!line.json.is_object() || !line.json.contains("id") || !line.json.at("id").is_string() ||
        !line.json.contains("index") || !line.json.at("index").is_number_integer())
      throw InputError(path, where, "not a sweep result line (expected an object with \"id\" and \"index\")");
    line.id = line.json.at("id").get<std::string>();
    line.index = line.json.at("index").get<int>();
    line.text = std::move(text);
    lines.push_back(std::move(line));
  }
  if (partial_bytes) *partial_bytes = content.size() - start;
  return lines;
}

SweepResultsFile::SweepResultsFile(const std::string& path, OpenResults mode,
                                   const std::function<void(const std::string&)>& warn)
    : path_(path) {
  // Open (never truncating yet) and lock before reading: a second sweep on the same file stops
  // here instead of writing every point beside the first.  The lock lasts as long as this object
  // (the point processes share the descriptor, and die with the sweep).
  require_regular_or_absent(path);
  fd_ = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  // A path that cannot be written (a missing folder, no permission) is bad input, as for every command.
  if (fd_ < 0) throw InputError(path, "", std::string("cannot open for appending: ") + std::strerror(errno));
  try {
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      if (errno == EWOULDBLOCK)
        throw std::invalid_argument(path + ": another sweep holds it (the results file is locked); wait for that sweep "
                                           "to finish or write to another -o file");
      system_error(path, "cannot lock");
    }
    std::size_t partial = 0;
    if (mode != OpenResults::Overwrite) existing_ = read_sweep_lines(path, &partial);
    if (mode == OpenResults::Fresh && (!existing_.empty() || partial > 0))
      throw std::invalid_argument(path + " already holds " + std::to_string(existing_.size()) +
                                  " results: pass --resume to continue that sweep or --overwrite to start again");
    if (mode == OpenResults::Overwrite && ::ftruncate(fd_, 0) != 0) system_error(path, "cannot empty");
    if (partial > 0) {
      struct stat st {};
      if (::fstat(fd_, &st) != 0) system_error(path, "cannot stat");
      if (::ftruncate(fd_, st.st_size - static_cast<off_t>(partial)) != 0)
        system_error(path, "cannot drop a partial line");
      ::fsync(fd_);
      if (warn)
        warn(fmt::format("{}: dropped a partial last line ({} bytes) left by an interrupted sweep", path, partial));
    }
  } catch (...) {
    ::close(fd_);  // also releases the lock
    fd_ = -1;
    throw;
  }
}

SweepResultsFile::~SweepResultsFile() {
  if (fd_ >= 0) ::close(fd_);
}

std::set<std::string> SweepResultsFile::existing_ids() const {
  std::set<std::string> ids;
  for (const auto& l : existing_) ids.insert(l.id);
  return ids;
}

void SweepResultsFile::append(const std::string& line) {
  const std::string whole = line + "\n";
  const char* p = whole.data();
  std::size_t left = whole.size();
  while (left > 0) {  // regular files take it in one write; more only when the disk fills up
    ssize_t n = ::write(fd_, p, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) system_error(path_, "cannot append a result");
    p += n, left -= static_cast<std::size_t>(n);
  }
  if (::fsync(fd_) != 0) system_error(path_, "cannot sync");
}

namespace {

// What a line says of its sweep: the keys of its axes, and its base scenario, taken as the
// point's input with every axis key set to null (the same for every point of one sweep).
struct SweepIdentity {
  std::string axes;  // the point's keys, comma-separated, sorted
  std::uint64_t base = 0;
};

SweepIdentity identity_of(const SweepLine& l) {
  SweepIdentity out;
  const luwu::Json point = get_or_null(l.json, "point");
  luwu::Json base = get_or_null(l.json, "input");
  if (point.is_object())
    for (auto it = point.begin(); it != point.end(); ++it) {
      out.axes += (out.axes.empty() ? "" : ",") + it.key();
      try {
        apply_setting(base, it.key(), nullptr, "");
      } catch (const std::exception&) {
        // a path that ran through something else: the rest of the input still tells
      }
    }
  // Each point describes itself (expand_sweep), and a description changes no result.
  if (base.is_object()) base.erase("description");
  out.base = fnv1a_64(base.dump());
  return out;
}

[[noreturn]] void mixed_sweeps(const std::string& detail) {
  throw std::invalid_argument("results of different sweeps: " + detail +
                              "; their indexes mean different settings, so they are not merged (pass --allow-mixed to "
                              "merge them anyway)");
}

}  // namespace

std::vector<SweepLine> merge_sweep_results(const std::vector<std::string>& files, bool allow_mixed) {
  std::map<std::string, SweepLine> by_id;
  std::map<int, std::pair<std::string, std::string>> id_of_index;  // index -> (id, file)
  std::optional<std::pair<SweepIdentity, std::string>> first;     // the first line's sweep, and its file
  for (const auto& f : files) {
    bool exists = false;
    const std::string content = read_all(f, &exists);
    if (!exists) throw InputError(f, "", "cannot open file");
    std::size_t partial = 0;
    std::vector<SweepLine> lines = read_sweep_lines(f, &partial);
    const std::string text = content.substr(content.size() - partial);
    if (text.find_first_not_of(" \t\r") != std::string::npos) {
      // A last line without its newline: whole JSON (a file edited by hand) is taken; a line cut
      // off by a sweep stopped mid-write is bad input, never silently dropped.
      SweepLine last;
      try {
        last.json = luwu::parse_json_text(text, f);
      } catch (const InputError&) {
        throw InputError(f, fmt::format("line {}", std::count(content.begin(), content.end(), '\n') + 1),
                         "the last line is cut off (a sweep stopped while writing it?): `luwusim sweep ... --resume` "
                         "drops and reruns it");
      }
      if (last.json.is_object() && last.json.contains("id") && last.json.at("id").is_string() &&
          last.json.contains("index") && last.json.at("index").is_number_integer()) {
        last.id = last.json.at("id").get<std::string>();
        last.index = last.json.at("index").get<int>();
        last.text = text;
        lines.push_back(std::move(last));
      } else {
        throw InputError(f, "last line", "not a sweep result line (expected an object with \"id\" and \"index\")");
      }
    }
    for (auto& l : lines) {
      if (!allow_mixed) {
        const auto [seen, fresh] = id_of_index.emplace(l.index, std::make_pair(l.id, f));
        if (!fresh && seen->second.first != l.id)
          mixed_sweeps(fmt::format("point {} is {} in {} but {} in {}", l.index, seen->second.first, seen->second.second,
                                   l.id, f));
        const SweepIdentity identity = identity_of(l);
        if (!first) {
          first = std::make_pair(identity, f);
        } else if (identity.axes != first->first.axes) {
          mixed_sweeps(fmt::format("{} has points with axes [{}] and {} has points with axes [{}]", first->second,
                                   first->first.axes, f, identity.axes));
        } else if (identity.base != first->first.base) {
          mixed_sweeps(fmt::format("the points of {} and {} (point {}) come from different base scenarios",
                                   first->second, f, l.id));
        }
      }
      by_id.emplace(l.id, std::move(l));
    }
  }
  std::vector<SweepLine> out;
  for (auto& [id, l] : by_id) out.push_back(std::move(l));
  std::stable_sort(out.begin(), out.end(), [](const SweepLine& a, const SweepLine& b) { return a.index < b.index; });
  return out;
}

std::string sweep_lines_to_jsonl(const std::vector<SweepLine>& lines) {
  std::string out;
  for (const auto& l : lines) out += l.text + "\n";
  return out;
}

std::string sweep_results_to_csv(const std::vector<SweepLine>& lines) {
  // Point keys in the order their axes were written, first seen first.
  std::vector<std::string> point_keys;
  for (const auto& l : lines) {
    auto ordered = nlohmann::ordered_json::parse(l.text);
    if (!ordered.contains("point") || !ordered.at("point").is_object()) continue;
    for (auto it = ordered.at("point").begin(); it != ordered.at("point").end(); ++it)
      if (std::find(point_keys.begin(), point_keys.end(), it.key()) == point_keys.end()) point_keys.push_back(it.key());
  }
  const std::vector<std::string>& scenario_cols = scenario_csv_columns();
  const std::vector<std::string>& cluster_cols = cluster_csv_columns();
  const std::vector<std::string> result_cols = {"iteration_time_s", "tokens_per_s", "tflops_per_gpu", "mfu"};
  const std::vector<std::string> breakdown_cols = {"compute", "exposed_communication", "exposed_optimizer", "io_stall",
                                                   "host_launch", "idle"};
  const std::size_t result_fields =  // system_kind .. cost
      2 + 2 + 2 + result_cols.size() + breakdown_cols.size() + 3 + spine_summary_keys().size() + 2;
  CsvRow header;
  for (const char* c : {"id", "index"}) header.add(c);
  for (const auto& k : point_keys) header.add(luwu::Json("point." + k));
  for (const auto& c : scenario_cols) header.add(c);
  for (const auto& c : cluster_cols) header.add(c);
  for (const char* c : {"system", "system_kind", "system_settings", "first_system", "first_system_speedup", "feasible",
                        "reason"})
    header.add(c);
  for (const auto& c : result_cols) header.add(c);
  for (const auto& c : breakdown_cols) header.add(c + "_s");
  for (const char* c : {"sent_bytes_per_worker", "received_bytes_per_worker", "gpu_peak_memory_bytes"}) header.add(c);
  for (const auto& k : spine_summary_keys()) header.add("spine_" + k);
  for (const char* c : {"cluster_cost_usd", "tokens_per_s_per_1000_usd", "error"}) header.add(c);
  std::string out = header.line();

  for (const auto& l : lines) {
    const auto& j = l.json;
    CsvRow head;
    head.add(l.id);
    head.add(l.index);
    const luwu::Json point = get_or_null(j, "point");
    for (const auto& k : point_keys) head.add(get_or_null(point, k));
    const luwu::Json scenario = get_or_null(j, "scenario");
    for (const auto& c : scenario_cols) head.add(get_or_null(scenario, c));
    const luwu::Json cluster = get_or_null(scenario, "cluster");
    for (const auto& c : cluster_cols) head.add(get_or_null(cluster, c));

    if (!j.contains("results")) {  // failed as a whole; a crashed system's row below has its error
      CsvRow row = head;
      row.add_blanks(1 + result_fields);  // no system, no result
      row.add(get_or_null(j, "error"));
      out += row.line();
      continue;
    }
    // Each result's entry in the point's scenario (results follow the systems' order), whose
    // settings tell variants apart; and the first system that ran, against which each is compared
    // as in `run`'s table ("first's speedup over this one" = this one's time / the first's).
    const luwu::Json systems = get_or_null(get_or_null(j, "input"), "systems");
    const luwu::Json& results = j.at("results");
    luwu::Json first_label, first_time;
    for (const auto& r : results)
      if (get_or_null(r, "feasible") == true && get_or_null(r, "iteration_time_s").is_number()) {
        first_label = r.at("system");
        first_time = r.at("iteration_time_s");
        break;
      }
    for (std::size_t k = 0; k < results.size(); ++k) {
      const auto& r = results[k];
      CsvRow row = head;
      row.add(get_or_null(r, "system"));
      const bool one_per_entry = systems.is_array() && systems.size() == results.size();
      const luwu::Json entry = one_per_entry ? systems[k] : luwu::Json();
      if (entry.is_string()) {
        row.add(entry);
        row.add(luwu::Json("{}"));
      } else if (entry.is_object()) {
        row.add(get_or_null(entry, "name"));
        luwu::Json settings = entry;
        settings.erase("name");
        settings.erase("label");
        row.add(luwu::Json(settings.dump()));
      } else {
        row.add_blanks(2);
      }
      row.add(first_label);
      const luwu::Json t = get_or_null(r, "iteration_time_s");
      row.add(t.is_number() && first_time.is_number() ? luwu::Json(t.get<double>() / first_time.get<double>())
                                                      : luwu::Json());
      if (r.contains("error")) {
        row.add_blanks(result_fields - 4);  // feasible .. cost
        row.add(r.at("error"));
        out += row.line();
        continue;
      }
      row.add(get_or_null(r, "feasible"));
      row.add(get_or_null(r, "reason"));
      for (const auto& c : result_cols) row.add(get_or_null(r, c));
      const luwu::Json breakdown = get_or_null(r, "breakdown_s");
      for (const auto& c : breakdown_cols) row.add(get_or_null(breakdown, c));
      const luwu::Json net = get_or_null(r, "network_bytes_per_worker");
      row.add(get_or_null(net, "sent"));
      row.add(get_or_null(net, "received"));
      luwu::Json peak;
      if (r.contains("gpu_peak_memory_bytes") && r.at("gpu_peak_memory_bytes").is_array() &&
          !r.at("gpu_peak_memory_bytes").empty()) {
        double m = 0;
        for (const auto& b : r.at("gpu_peak_memory_bytes")) m = std::max(m, b.get<double>());
        peak = m;
      }
      row.add(peak);
      const luwu::Json spines = get_or_null(r, "spines");
      for (const auto& k : spine_summary_keys()) row.add(get_or_null(spines, k));
      const luwu::Json cost = get_or_null(r, "cost");
      row.add(get_or_null(cost, "usd"));
      row.add(get_or_null(cost, "tokens_per_s_per_1000_usd"));
      row.add_blanks(1);  // no error
      out += row.line();
    }
  }
  return out;
}

}  // namespace luwu::sim
