#pragma once
// Output files are written whole or not at all: to a temporary beside the target, then renamed
// over it.  Renaming replaces only a regular file: a symbolic link is followed (its target gets the
// new content, the link stays), and a device or FIFO (/dev/stdout, a pipe) is written in place, so
// that neither is swapped for a file.  A path that cannot be written (a directory, a missing
// folder) is an InputError naming it (exit 2); a write that fails is std::runtime_error (exit 1).
// The temporary is made with mkstemp (a fresh name, created exclusively: nothing planted at a
// guessable name is followed) and takes the replaced file's permissions, or a new file's.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <system_error>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

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

// An InputError now, before any work, unless `path` could be written later: not a directory, and
// in a folder that exists.  (A command that simulates for minutes must not fail at its output.)
inline void require_writable_output(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (fs::is_directory(fs::status(path, ec))) throw InputError(path, "", "is a directory, not a file to write");
  const fs::path folder = fs::path(path).parent_path();
  if (!folder.empty() && !fs::is_directory(fs::status(folder, ec)))
    throw InputError(path, "", "cannot be written: the folder " + folder.string() + " does not exist");
}

inline void write_file_atomically(const std::string& path, const std::string& content) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);  // through symbolic links
  if (fs::exists(st)) {
    if (fs::is_directory(st)) throw InputError(path, "", "is a directory, not a file to write");
    if (!fs::is_regular_file(st)) return detail::write_all(path, path, content, std::ios::binary | std::ios::out);
  }
  // Through symbolic links (a chain of them, a dangling one too) to the file they name: that file
  // is written, the links stay.
  fs::path target = path;
  for (int hops = 0; fs::is_symlink(fs::symlink_status(target, ec)); ++hops) {
    if (hops == 40) throw InputError(path, "", "too many levels of symbolic links");
    const fs::path next = fs::read_symlink(target, ec);
    if (ec) throw InputError(path, "", "cannot resolve the symbolic link: " + ec.message());
    target = next.is_absolute() ? next : target.parent_path() / next;
  }
  std::string tmp = target.string() + ".tmp-luwusim-XXXXXX";
  const int fd = ::mkstemp(tmp.data());
  if (fd < 0) throw InputError(path, "", std::string("cannot create a file beside it: ") + std::strerror(errno));
  // The replaced file's permissions, or what a new file gets under the umask.
  struct stat existing {};
  mode_t mode = 0;
  if (::stat(target.c_str(), &existing) == 0) {
    mode = existing.st_mode & 07777;
  } else {
    const mode_t mask = ::umask(0);
    ::umask(mask);
    mode = 0666 & ~mask;
  }
  bool ok = ::fchmod(fd, mode) == 0;
  for (std::size_t done = 0; ok && done < content.size();) {
    const ssize_t n = ::write(fd, content.data() + done, content.size() - done);
    if (n < 0 && errno == EINTR) continue;
    ok = n > 0;
    if (ok) done += static_cast<std::size_t>(n);
  }
  const std::string write_error = ok ? "" : std::strerror(errno);
  if (::close(fd) != 0 && ok) ok = false;
  if (!ok) {
    std::remove(tmp.c_str());
    throw std::runtime_error(path + ": write failed: " + (write_error.empty() ? std::strerror(errno) : write_error));
  }
  if (std::rename(tmp.c_str(), target.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    std::remove(tmp.c_str());
    throw std::runtime_error(path + ": cannot rename the temporary file into place: " + why);
  }
}

}  // namespace luwu
