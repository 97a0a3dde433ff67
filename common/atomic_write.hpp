#pragma once
// Output files are written whole or not at all: to a temporary beside the target, then renamed.
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <string>

namespace luwu {

inline void write_file_atomically(const std::string& path, const std::string& content) {
  const std::string tmp = path + ".tmp-luwusim";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw std::runtime_error(path + ": cannot open for writing");
    out << content;
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      throw std::runtime_error(path + ": write failed");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw std::runtime_error(path + ": cannot rename temporary file into place");
  }
}

}  // namespace luwu
