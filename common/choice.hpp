#pragma once
// Choosing among named values: the one place that turns a word into one of a fixed list of names
// (an enum's spellings, a builder's kinds, a mode) and words the error when it is none of them:
//
//   unknown dtype "fp18" (did you mean "fp16"?); expected "fp16", "bf16" or "fp32"
//
// The suggestion is the nearest name by edit distance, left out when nothing is close.  These
// functions throw std::invalid_argument; JsonNode::as_choice (common/json_input.hpp) reads a JSON
// string the same way and throws InputError naming the file and the node's JSON path.  Lookups of
// open-ended names (a vertex, a shipped profile, a field) do not list every name: they append
// did_you_mean() to their own message.
#include <algorithm>
#include <cstddef>
#include <initializer_list>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace luwu {

inline std::size_t edit_distance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

// The nearest of `known` to `word` (the first of equally near ones), or "" when nothing is
// close: within 2 edits, or a third of the word's length for longer words.
inline std::string nearest_key(const std::string& word, const std::vector<std::string>& known) {
  std::string best;
  std::size_t best_d = std::numeric_limits<std::size_t>::max();
  for (const auto& k : known) {
    std::size_t d = edit_distance(word, k);
    if (d < best_d) best_d = d, best = k;
  }
  return best_d <= std::max<std::size_t>(2, word.size() / 3) ? best : std::string();
}

// " (did you mean \"<nearest>\"?)", or "" when no name of `known` is close to `word`.
inline std::string did_you_mean(const std::string& word, const std::vector<std::string>& known) {
  std::string hint = nearest_key(word, known);
  return hint.empty() ? std::string() : " (did you mean \"" + hint + "\"?)";
}

// "\"a\"", "\"a\" or \"b\"", "\"a\", \"b\" or \"c\"".
inline std::string quoted_alternatives(const std::vector<std::string>& names) {
  std::string out;
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (i > 0) out += i + 1 == names.size() ? " or " : ", ";
    out += "\"" + names[i] + "\"";
  }
  return out;
}

// unknown <noun> "<text>" (did you mean "<nearest>"?); expected "a", "b" or "c"
inline std::string unknown_choice_message(const std::string& text, const std::vector<std::string>& names,
                                          const std::string& noun) {
  return "unknown " + noun + " \"" + text + "\"" + did_you_mean(text, names) + "; expected " +
         quoted_alternatives(names);
}

// The position of `text` in `names`; std::invalid_argument with unknown_choice_message otherwise.
inline std::size_t choice_index(const std::string& text, const std::vector<std::string>& names,
                                const std::string& noun) {
  const auto it = std::find(names.begin(), names.end(), text);
  if (it == names.end()) throw std::invalid_argument(unknown_choice_message(text, names, noun));
  return static_cast<std::size_t>(it - names.begin());
}

// Names with their values, in the order the error message lists them.
template <class T>
using Choices = std::vector<std::pair<std::string, T>>;

template <class T>
std::vector<std::string> choice_names(const Choices<T>& choices) {
  std::vector<std::string> names;
  names.reserve(choices.size());
  for (const auto& [name, value] : choices) names.push_back(name);
  return names;
}

// Choices spelled as to_string(value) spells them (found by argument-dependent lookup), so that
// an enum's reader and writer cannot disagree:  choices_by_name({DType::Fp16, DType::Fp32}).
template <class T>
Choices<T> choices_by_name(std::initializer_list<T> values) {
  Choices<T> out;
  out.reserve(values.size());
  for (T v : values) out.emplace_back(to_string(v), v);
  return out;
}

// The value named `text`; std::invalid_argument with unknown_choice_message otherwise.
//   DType t = choose<DType>(text, {{"fp16", DType::Fp16}, {"bf16", DType::Bf16}}, "dtype");
template <class T>
T choose(const std::string& text, const Choices<T>& choices, const std::string& noun) {
  return choices[choice_index(text, choice_names(choices), noun)].second;
}

}  // namespace luwu
