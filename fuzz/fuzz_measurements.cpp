// libFuzzer target: the measurements door of `luwusim compare` (sim::load_measurements: a CSV with
// a header and quoted fields, or a JSON {"measurements": [...]}), fed through a real file as the
// command reads it.  The first byte picks the form (even: .csv, odd: .json); the rest is the file.
// Nothing is simulated: the scenarios the rows name are only resolved as paths.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <string>

#include <unistd.h>

#include "common/input_error.hpp"
#include "sim/experiment/compare.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const bool csv = (data[0] & 1) == 0;
  std::string path = std::string("/tmp/luwusim-fuzz-measurements-XXXXXX") + (csv ? ".csv" : ".json");
  const int fd = ::mkstemps(path.data(), csv ? 4 : 5);
  if (fd < 0) return 0;
  const bool written = ::write(fd, data + 1, size - 1) == static_cast<ssize_t>(size - 1);
  ::close(fd);
  if (written) {
    try {
      luwu::sim::load_measurements(path);
    } catch (const luwu::InputError&) {
    } catch (const std::invalid_argument&) {
    }
  }
  ::unlink(path.c_str());
  return 0;
}
