#pragma once
// The one error type for bad input: it names the file and the JSON path of the bad field, so a
// user can find the mistake, and the CLI maps it to exit code 2.
#include <cstddef>
#include <stdexcept>
#include <string>

namespace luwu {

class InputError : public std::runtime_error {
 public:
  InputError(std::string file, std::string json_path, const std::string& what)
      : std::runtime_error(format(file, json_path, what)),
        file_(std::move(file)),
        json_path_(std::move(json_path)) {}

  const std::string& file() const { return file_; }
  const std::string& json_path() const { return json_path_; }

 private:
  static std::string format(const std::string& file, const std::string& path, const std::string& what) {
    std::string msg = file.empty() ? std::string("<input>") : file;
    if (!path.empty()) msg += ": at " + path;
    return msg + ": " + shortened(what);
  }
  // A message quotes the bad value; a value of megabytes is quoted by its ends (a 50 MB string
  // became a 50 MB message).
  static std::string shortened(const std::string& what) {
    constexpr std::size_t kMax = 2000, kHead = 1200, kTail = 400;
    if (what.size() <= kMax) return what;
    return what.substr(0, kHead) + " ... [" + std::to_string(what.size() - kHead - kTail) + " bytes left out] ... " +
           what.substr(what.size() - kTail);
  }
  std::string file_;
  std::string json_path_;
};

}  // namespace luwu
