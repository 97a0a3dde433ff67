// libFuzzer target: `trace import-chakra`'s door, fed through a real file as the command reads it:
// the same bytes once as JSON (load_chakra_json: an array, the jsonizer's sequence of objects or
// the feeder's workload_graph object) and once as a binary .et (load_chakra_et: varint-delimited
// protobuf, gzipped or not), then chakra_to_trace for a 2-block GPT (what a foreign graph's
// kernels are matched against).
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>

#include <unistd.h>

#include "common/input_error.hpp"
#include "workloads/chakra_et.hpp"
#include "workloads/model_catalog.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const auto workload = [] {
    luwu::workloads::ModelConfig model = *luwu::workloads::find_catalog_model("gpt3-125m");
    model.layers = 2;
    luwu::workloads::TrainingConfig training;
    training.micro_batch = 1;
    training.seq_len = 64;
    return std::pair{model, training};
  }();
  for (const char* suffix : {".json", ".et"}) {
    std::string path = std::string("/tmp/luwusim-fuzz-chakra-XXXXXX") + suffix;
    const int fd = ::mkstemps(path.data(), static_cast<int>(std::string(suffix).size()));
    if (fd < 0) return 0;
    const bool written = ::write(fd, data, size) == static_cast<ssize_t>(size);
    ::close(fd);
    if (written) {
      try {
        luwu::workloads::chakra_to_trace(luwu::workloads::load_chakra(path), workload);
      } catch (const luwu::InputError&) {
      } catch (const std::invalid_argument&) {
      }
    }
    ::unlink(path.c_str());
  }
  return 0;
}
