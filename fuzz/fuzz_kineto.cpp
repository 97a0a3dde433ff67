// libFuzzer target: the Kineto door of `run --kernel-times` (workloads::kineto_profile_from_json),
// then the profile applied to a 2-block GPT's trace (apply_kernel_times), as a scenario's
// "kernel_times" is.
#include "fuzz/fuzz_loader.hpp"
#include "workloads/kernel_profile.hpp"
#include "workloads/kernel_times.hpp"
#include "workloads/model_catalog.hpp"
#include "workloads/trace.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  static const luwu::workloads::Trace trace = [] {
    luwu::workloads::ModelConfig model = *luwu::workloads::find_catalog_model("gpt3-125m");
    model.layers = 2;
    luwu::workloads::TrainingConfig training;
    training.micro_batch = 1;
    training.seq_len = 64;
    return luwu::workloads::generate_trace(model, training);
  }();
  return luwu::fuzz::run_loader(data, size, "fuzz.kineto.json", [](const luwu::JsonNode& node) {
    luwu::workloads::Trace copy = trace;
    luwu::workloads::apply_kernel_times(copy, luwu::workloads::kineto_profile_from_json(node));
  });
}
