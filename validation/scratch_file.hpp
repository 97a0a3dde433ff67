#pragma once
// Scratch files of the measurements (calibrate, validate): created exclusively, so a file or a
// symbolic link planted at the name in a shared folder such as /tmp is never opened, truncated or
// written through (the name is predictable: it carries the process id).  Then opened for direct
// I/O where the filesystem allows it, never following a link.
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

#include <fcntl.h>
#include <unistd.h>

namespace luwu::validation {

struct ScratchFile {
  int fd = -1;
  bool direct_io = false;
};

// Creates `path` (which must not exist) and opens it read-write, with O_DIRECT when `try_direct`
// and the filesystem accepts it.  std::runtime_error naming the path when it exists or cannot be made.
inline ScratchFile create_scratch_file(const std::string& path, bool try_direct = true) {
  const int made = ::open(path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (made < 0)
    throw std::runtime_error(path + ": cannot create the scratch file" +
                             (errno == EEXIST ? std::string(" (something already has its name; remove it)")
                                              : ": " + std::string(std::strerror(errno))));
  ScratchFile f;
  if (try_direct) {
    f.fd = ::open(path.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_DIRECT);
    f.direct_io = f.fd >= 0;
  }
  if (f.fd >= 0) {
    ::close(made);
  } else {
    f.fd = made;
  }
  return f;
}

}  // namespace luwu::validation
