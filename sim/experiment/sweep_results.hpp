#pragma once
// The results file of a sweep: JSON Lines, one complete line per finished point, in completion
// order.  A line is
//   {"id": "3-<hash>", "index": 3, "point": {"cluster.workers": 8, ...}, "input": {scenario JSON},
//    "scenario": {summary as in `luwusim run --json`}, "results": [{system result} | {"system", "error"}]}
// or, when the point could not be simulated at all,
//   {"id", "index", "point", "input", "error": "why"}.
// A point one of whose simulations crashed (killed by a signal) failed too: its line has the
// "scenario" and "results" (the crashed system's entry with its error) and then an "error".
// Lines are appended whole, one write() then fsync(), so a killed sweep leaves every finished
// point and at most one partial last line, which the next open drops.
#include <functional>
#include <set>
#include <string>
#include <vector>

#include "common/json_input.hpp"
#include "sim/experiment/sweep.hpp"

namespace luwu::sim {

struct SweepLine {
  int index = 0;
  std::string id;
  std::string text;  // the line as written, without its newline
  luwu::Json json;
};

// The line of a point from what `run --json` prints for it ({"scenario", "results"}), or of a
// point that failed.  Byte-identical for the same point and results.
std::string sweep_result_line(const SweepPoint& point, const luwu::Json& run_json);
std::string sweep_error_line(const SweepPoint& point, const std::string& error);

// The complete lines of a results file, in file order; a missing file has none.  A last line
// without its newline is not returned; its size goes to *partial_bytes.  A complete line that is
// not a result line is an InputError naming the file and the line.
std::vector<SweepLine> read_sweep_lines(const std::string& path, std::size_t* partial_bytes = nullptr);

enum class OpenResults { Fresh, Resume, Overwrite };

// The results file, open for appending.  Fresh refuses a file that already holds results (it
// names --resume and --overwrite); Resume keeps them, dropping a partial last line; Overwrite
// empties the file.
class SweepResultsFile {
 public:
  SweepResultsFile(const std::string& path, OpenResults mode,
                   const std::function<void(const std::string&)>& warn = nullptr);
  ~SweepResultsFile();
  SweepResultsFile(const SweepResultsFile&) = delete;
  SweepResultsFile& operator=(const SweepResultsFile&) = delete;

  const std::vector<SweepLine>& existing() const { return existing_; }
  std::set<std::string> existing_ids() const;
  void append(const std::string& line);  // one complete line, durable when this returns

 private:
  std::string path_;
  int fd_ = -1;
  std::vector<SweepLine> existing_;
};

// The results of several files (shards, resumed runs) as one: one line per id, sorted by index.
// Lines of different sweeps (the same index with another id, other axes, or another base
// scenario, as each line's "point" and "input" tell) are an std::invalid_argument naming the
// files, unless allow_mixed.
std::vector<SweepLine> merge_sweep_results(const std::vector<std::string>& files, bool allow_mixed = false);
std::string sweep_lines_to_jsonl(const std::vector<SweepLine>& lines);

// One row per point and system, flat columns with units in their names; a point that failed is
// one row with its error.  Point settings are columns "point.<key>" (lists and objects as JSON).
std::string sweep_results_to_csv(const std::vector<SweepLine>& lines);

}  // namespace luwu::sim
