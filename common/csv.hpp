#pragma once
// CSV as RFC 4180 writes it, for every CSV luwusim prints: a field holding a comma, a double quote,
// CR or LF is quoted, its quotes doubled; rows end in LF (pandas and Python's csv read both).
#include <cstddef>
#include <string>

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

}  // namespace luwu
