#pragma once
// Reading JSON input with paths: every accessor knows where it is ("$.layers[3].hidden") and
// throws InputError naming the file and that path.  Objects can be closed against unknown keys,
// with the nearest known key suggested; strings can be one of a list of names (as_choice, with
// common/choice.hpp's message).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/choice.hpp"
#include "common/input_error.hpp"

namespace luwu {

using Json = nlohmann::json;

// JSON input nests at most this deep: luwusim's own files nest under 10 levels, and the parser
// is not the only code that walks a document recursively (copies, dumps, the readers), so a
// document thousands of levels deep would overflow the stack.
inline constexpr int kMaxJsonNestingDepth = 256;

// ... and holds at most this many values (arrays, objects and the scalars in them): the parsed
// document costs memory per value, not per byte (510 MiB of empty objects grew past 14 GB).  The
// largest inputs luwusim reads, traces and profiler traces of about a million events, hold tens
// of millions; at this cap a document takes at most a few GB.
inline constexpr std::size_t kMaxJsonValues = 64'000'000;

// An InputError naming the byte offset unless `text`'s arrays and objects nest at most
// kMaxJsonNestingDepth deep and it holds at most kMaxJsonValues values; checked before any parse
// (brackets and commas inside strings do not count).
inline void require_json_bounds(const std::string& text, const std::string& file) {
  int depth = 0;
  std::size_t values = 1;  // each '[', '{' and ',' starts one more
  bool in_string = false, escaped = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{' || c == ',') {
      if (++values > kMaxJsonValues)
        throw InputError(file, "", "JSON of more than " + std::to_string(kMaxJsonValues / 1'000'000) +
                                       " million values (at byte " + std::to_string(i) +
                                       "); its parsed form would not fit a bounded memory");
      if (c != ',' && ++depth > kMaxJsonNestingDepth)
        throw InputError(file, "", "JSON nested more than " + std::to_string(kMaxJsonNestingDepth) +
                                       " levels deep (at byte " + std::to_string(i) + "); luwusim's inputs nest a few levels");
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
}

// Parses JSON text (of any nlohmann document type: Json, ordered_json); too deep a nesting, a
// syntax error or an unrepresentable number is an InputError.
template <typename Document = Json>
inline Document parse_json_document(const std::string& text, const std::string& file) {
  require_json_bounds(text, file);
  try {
    return Document::parse(text);
  } catch (const typename Document::exception& e) {  // syntax errors, and numbers beyond a double (1e400)
    throw InputError(file, "", std::string("not valid JSON: ") + e.what());
  }
}

inline Json parse_json_text(const std::string& text, const std::string& file) { return parse_json_document<Json>(text, file); }

// Input files luwusim reads (scenarios, topologies, traces, profiles, models, sweeps) are at most
// this large: the largest a shipped command writes is a trace of about a million ops (~150 MB).
inline constexpr std::uintmax_t kMaxInputFileBytes = 512ull << 20;

// An InputError unless `file` is a regular file of at most kMaxInputFileBytes (a missing file, a
// directory, a device such as /dev/zero, a FIFO are refused before anything reads them); `kind`
// names what was expected ("JSON file").
inline void require_input_file(const std::string& file, const std::string& kind) {
  std::error_code ec;
  const auto status = std::filesystem::status(file, ec);
  if (!std::filesystem::exists(status)) throw InputError(file, "", "cannot open file: no such file");
  if (std::filesystem::is_directory(status)) throw InputError(file, "", "is a directory, not a " + kind);
  if (!std::filesystem::is_regular_file(status))
    throw InputError(file, "", "is not a regular file (a device or a pipe); give a " + kind);
  const auto size = std::filesystem::file_size(file, ec);
  if (!ec && size > kMaxInputFileBytes)
    throw InputError(file, "", "is " + std::to_string(size >> 20) + " MiB; input files are at most " +
                                   std::to_string(kMaxInputFileBytes >> 20) + " MiB");
}

// Reads and parses a JSON file; a file require_input_file refuses, or a syntax error, is an InputError.
inline Json load_json_file(const std::string& file) {
  require_input_file(file, "JSON file");
  std::ifstream in(file);
  if (!in) throw InputError(file, "", "cannot open file");
  std::stringstream buf;
  buf << in.rdbuf();
  return parse_json_text(buf.str(), file);
}

// The stems of the .json files in `dir` ("a100-40gb-sxm" for a100-40gb-sxm.json), sorted; none
// when the folder is missing.
inline std::vector<std::string> json_file_stems(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec))
    if (entry.is_regular_file() && entry.path().extension() == ".json") names.push_back(entry.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

// A view of one JSON value with its file and path.
class JsonNode {
 public:
  JsonNode(const Json& value, std::string file, std::string path = "$")
      : v_(&value), file_(std::move(file)), path_(std::move(path)) {}

  const Json& raw() const { return *v_; }
  const std::string& file() const { return file_; }
  const std::string& path() const { return path_; }

  [[noreturn]] void fail(const std::string& what) const { throw InputError(file_, path_, what); }

  bool is_object() const { return v_->is_object(); }
  bool is_array() const { return v_->is_array(); }
  bool is_string() const { return v_->is_string(); }
  bool is_number() const { return v_->is_number(); }
  bool has(const std::string& key) const { return v_->is_object() && v_->contains(key); }

  JsonNode at(const std::string& key) const {
    expect_object();
    auto it = v_->find(key);
    if (it == v_->end()) throw InputError(file_, path_, "missing required field \"" + key + "\"");
    return JsonNode(*it, file_, path_ + "." + key);
  }
  JsonNode at(std::size_t index) const {
    expect_array();
    if (index >= v_->size()) throw InputError(file_, path_, "index out of range");
    return JsonNode((*v_)[index], file_, path_ + "[" + std::to_string(index) + "]");
  }
  std::size_t size() const {
    expect_array();
    return v_->size();
  }
  std::vector<std::string> keys() const {
    expect_object();
    std::vector<std::string> out;
    for (auto it = v_->begin(); it != v_->end(); ++it) out.push_back(it.key());
    return out;
  }

  void expect_object() const {
    if (!v_->is_object()) fail(std::string("expected an object, found ") + v_->type_name());
  }
  void expect_array() const {
    if (!v_->is_array()) fail(std::string("expected an array, found ") + v_->type_name());
  }

  // Rejects keys outside `known`, suggesting the nearest known key.
  void only_keys(const std::vector<std::string>& known) const {
    expect_object();
    for (auto it = v_->begin(); it != v_->end(); ++it) {
      if (std::find(known.begin(), known.end(), it.key()) != known.end()) continue;
      throw InputError(file_, path_ + "." + it.key(), "unknown field \"" + it.key() + "\"" + did_you_mean(it.key(), known));
    }
  }

  std::string as_string() const {
    if (!v_->is_string()) fail(std::string("expected a string, found ") + v_->type_name());
    return v_->get<std::string>();
  }
  // A string that is one of `names`: its position there.  Anything else fails here with
  // unknown_choice_message (the nearest name suggested, all of them listed).
  std::size_t as_choice_index(const std::vector<std::string>& names, const std::string& noun) const {
    const std::string text = as_string();
    const auto it = std::find(names.begin(), names.end(), text);
    if (it == names.end()) fail(unknown_choice_message(text, names, noun));
    return static_cast<std::size_t>(it - names.begin());
  }
  // A string naming one of `choices`: its value.
  //   DType t = node.as_choice<DType>({{"fp16", DType::Fp16}, {"fp32", DType::Fp32}}, "dtype");
  template <class T>
  T as_choice(const Choices<T>& choices, const std::string& noun) const {
    return choices[as_choice_index(choice_names(choices), noun)].second;
  }
  bool as_bool() const {
    if (!v_->is_boolean()) fail(std::string("expected true or false, found ") + v_->type_name());
    return v_->get<bool>();
  }
  double as_number() const {
    if (!v_->is_number()) fail(std::string("expected a number, found ") + v_->type_name());
    double d = v_->get<double>();
    if (!std::isfinite(d)) fail("expected a finite number");
    return d;
  }
  double as_positive() const {
    double d = as_number();
    if (!(d > 0)) fail("expected a positive number, found " + v_->dump());
    return d;
  }
  double as_non_negative() const {
    double d = as_number();
    if (d < 0) fail("expected a non-negative number, found " + v_->dump());
    return d;
  }
  // An integer in [lo, hi].
  std::int64_t as_int(std::int64_t lo = std::numeric_limits<std::int64_t>::min(),
                      std::int64_t hi = std::numeric_limits<std::int64_t>::max()) const {
    if (!v_->is_number_integer() && !(v_->is_number_float() && is_integral_float()))
      fail(std::string("expected an integer, found ") + v_->dump());
    if (v_->is_number_unsigned() && v_->get<std::uint64_t>() > static_cast<std::uint64_t>(hi))
      fail("expected an integer at most " + std::to_string(hi) + ", found " + v_->dump());
    double d = v_->get<double>();
    // 2^63 is the first double past int64's range: the cast below would be undefined.
    if (v_->is_number_float() && !(d >= -0x1p63 && d < 0x1p63)) fail("expected an integer in int64's range, found " + v_->dump());
    if (d < static_cast<double>(lo) || d > static_cast<double>(hi))
      fail("expected an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], found " +
           v_->dump());
    return v_->is_number_float() ? static_cast<std::int64_t>(d) : v_->get<std::int64_t>();
  }

  // Optional fields: the default when absent.
  std::string get_string(const std::string& key, const std::string& dflt) const {
    return has(key) ? at(key).as_string() : dflt;
  }
  bool get_bool(const std::string& key, bool dflt) const { return has(key) ? at(key).as_bool() : dflt; }
  double get_number(const std::string& key, double dflt) const {
    return has(key) ? at(key).as_number() : dflt;
  }
  std::int64_t get_int(const std::string& key, std::int64_t dflt, std::int64_t lo, std::int64_t hi) const {
    return has(key) ? at(key).as_int(lo, hi) : dflt;
  }

 private:
  bool is_integral_float() const {
    double d = v_->get<double>();
    return std::isfinite(d) && std::floor(d) == d;
  }
  const Json* v_;
  std::string file_;
  std::string path_;
};

}  // namespace luwu
