#pragma once
// Output files are written whole or not at all: to a temporary beside the target, then renamed
// over it.  Renaming replaces only a regular file: a symbolic link is followed (its target gets the
// new content, the link stays), and a device or FIFO (/dev/stdout, a pipe) is written in place, so
// that neither is swapped for a file.  A path that cannot be written (a directory, a missing
// folder) is an InputError naming it (exit 2); a write that fails is std::runtime_error (exit 1).
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <system_error>

#include "common/input_error.hpp"

namespace luwu {

namespace detail {
inline void write_all(const std::string& path, const std::string& shown, const std::string& content,
                      std::ios::openmode mode) {
  std::ofstream out(path, mode);
  if (!out) throw InputError(shown, "", std::string("cannot open for writing: ") + std::strerror(errno));
  out << content;
  out.flush();
  out.close();
  if (!out) throw std::runtime_error(shown + ": write failed: " + std::strerror(errno));
}
}  // namespace detail

inline void write_file_atomically(const std::string& path, const std::string& content) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);  // through symbolic links
  if (fs::exists(st)) {
    if (fs::is_directory(st)) throw InputError(path, "", "is a directory, not a file to write");
    if (!fs::is_regular_file(st)) return detail::write_all(path, path, content, std::ios::binary | std::ios::out);
  }
  std::string target = path;
  if (fs::is_symlink(fs::symlink_status(path, ec))) {
    target = fs::weakly_canonical(path, ec).string();
    if (ec) throw InputError(path, "", "cannot resolve the symbolic link: " + ec.message());
  }
  const std::string tmp = target + ".tmp-luwusim";
  try {
    detail::write_all(tmp, path, content, std::ios::binary | std::ios::trunc);
  } catch (...) {
    std::remove(tmp.c_str());
    throw;
  }
  if (std::rename(tmp.c_str(), target.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    throw std::runtime_error(path + ": cannot rename the temporary file into place: " + why);
  }
}

}  // namespace luwu
