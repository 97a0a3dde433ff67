#pragma once
// Shared body of the libFuzzer targets: the bytes are one JSON document handed to a loader.  A
// loader may reject its input only with luwu::InputError or std::invalid_argument; anything else
// escaping (nlohmann type errors, std::out_of_range, bad_alloc, ...) is a finding, and so are
// crashes, hangs, leaks and undefined behaviour, which the sanitizers report.
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "common/input_error.hpp"
#include "common/json_input.hpp"

namespace luwu::fuzz {

// Parses the bytes as load_json_file does (a syntax error is an InputError) and runs `load` on the
// document.
template <typename Load>
int run_loader(const std::uint8_t* data, std::size_t size, const char* file_name, Load&& load) {
  Json doc;
  try {
    doc = parse_json_text(std::string(reinterpret_cast<const char*>(data), size), file_name);
  } catch (const InputError&) {
    return 0;
  }
  try {
    load(JsonNode(doc, file_name));
  } catch (const InputError&) {
  } catch (const std::invalid_argument&) {
  }
  return 0;
}

}  // namespace luwu::fuzz
