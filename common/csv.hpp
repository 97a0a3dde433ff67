#pragma once
// CSV as RFC 4180 writes it, for every CSV luwusim prints: a field holding a comma, a double quote,
// CR or LF is quoted, its quotes doubled; rows end in LF (pandas and Python's csv read both).
#include <cstddef>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "common/json_input.hpp"

namespace luwu {

inline std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string q(1, '"');
  for (char c : s) {
    if (c == '"') q += '"';
    q += c;
  }
  q += '"';
  return q;
}

// A JSON value as a field: null is empty, a string its text, anything else its JSON.
inline std::string csv_field(const Json& v) {
  if (v.is_null()) return "";
  return csv_field(v.is_string() ? v.get<std::string>() : v.dump());
}

// A CSV row, field by field.
class CsvRow {
 public:
  void add(const Json& v) { add_text(csv_field(v)); }
  void add(const std::string& text) { add_text(csv_field(text)); }
  void add(const char* text) { add_text(csv_field(std::string(text))); }
  void add_blanks(std::size_t n) {
    for (std::size_t i = 0; i < n; ++i) add_text("");
  }
  std::string line() const { return text_ + '\n'; }

 private:
  // Text already in CSV form (a quoted field, or a number).
  void add_text(const std::string& text) {
    if (fields_++ > 0) text_ += ',';
    text_ += text;
  }
  std::string text_;
  std::size_t fields_ = 0;
};

// One CSV record of a line (RFC 4180 quoting; a quoted field may not span lines here):
// std::invalid_argument when a quote opened on the line is not closed on it.
inline std::vector<std::string> csv_record(const std::string& line) {
  std::vector<std::string> out;
  std::string field;
  bool quoted = false;
  for (std::size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (c == '"' && quoted && i + 1 < line.size() && line[i + 1] == '"') field += c, ++i;
    else if (c == '"') quoted = !quoted;
    else if (c == ',' && !quoted) out.push_back(field), field.clear();
    else if (c != '\r') field += c;
  }
  if (quoted) throw std::invalid_argument("a quoted field is not closed on its line (a quoted field may not span lines here)");
  out.push_back(field);
  return out;
}

// csv_record of line `n` of `file`, its errors an InputError at that line.
inline std::vector<std::string> csv_record_at(const std::string& file, std::size_t n, const std::string& line) {
  try {
    return csv_record(line);
  } catch (const std::invalid_argument& e) {
    throw InputError(file, "line " + std::to_string(n), e.what());
  }
}

// A CSV file's records, header first, with their line numbers: lines starting with # are comments
// (pandas: read_csv(comment="#")) and blank lines are skipped.  The file must be a regular file of
// at most kMaxInputFileBytes; every record must have the header's field count (InputError naming
// the file and the line otherwise).
struct CsvRecord {
  std::size_t line = 0;
  std::vector<std::string> fields;
};
inline std::vector<CsvRecord> read_csv_file(const std::string& file) {
  require_input_file(file, "CSV file");
  std::ifstream in(file);
  if (!in) throw InputError(file, "", "cannot open file");
  std::vector<CsvRecord> out;
  std::string line;
  for (std::size_t n = 1; std::getline(in, line); ++n) {
    if (line.empty() || line == "\r" || line[0] == '#') continue;
    out.push_back({n, csv_record_at(file, n, line)});
    if (out.size() > 1 && out.back().fields.size() != out.front().fields.size())
      throw InputError(file, "line " + std::to_string(n),
                       std::to_string(out.back().fields.size()) + " fields where the header has " +
                           std::to_string(out.front().fields.size()));
  }
  if (out.empty()) throw InputError(file, "line 1", "empty file: expected a header");
  return out;
}

}  // namespace luwu
