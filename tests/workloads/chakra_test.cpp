// Chakra execution traces, JSON form: a luwusim trace exported and imported again is the same
// trace; a foreign graph's GPU compute nodes time the kernels of the model they are of; bad graphs
// are refused at their JSON path.
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <map>

#include "common/input_error.hpp"
#include "workloads/chakra_json.hpp"
#include "workloads/model_catalog.hpp"
#include "workloads/trace.hpp"

using namespace luwu;
using namespace luwu::workloads;

namespace {

TrainingConfig training(int b, int s, int g, bool recompute) {
  TrainingConfig t;
  t.micro_batch = b;
  t.seq_len = s;
  t.grad_accum = g;
  t.recompute = recompute;
  return t;
}

ModelConfig tiny_gpt() {
  const Json j = {{"name", "tiny-gpt"}, {"layers", 2}, {"hidden", 256}, {"heads", 4}, {"vocab", 1024}, {"max_seq", 512}};
  return model_from_json(JsonNode(j, "inline"));
}

ChakraGraph through_file(const ChakraGraph& g, const std::string& file) {
  {
    std::ofstream out(file);
    out << chakra_to_json_text(g);
  }
  ChakraGraph back = load_chakra_json(file);
  std::remove(file.c_str());
  return back;
}

std::string import_error(const std::string& text,
                         const std::optional<std::pair<ModelConfig, TrainingConfig>>& workload = std::nullopt) {
  const std::string file = "chakra-bad.json";
  {
    std::ofstream out(file);
    out << text;
  }
  std::string what;
  try {
    chakra_to_trace(load_chakra_json(file), workload);
  } catch (const InputError& e) {
    what = e.what();
  }
  std::remove(file.c_str());
  return what;
}

const char* kMeta = R"({"version": "0.0.4", "attr": [{"name": "schema", "stringVal": "1.0.2-chakra.0.0.4"}]})";

}  // namespace

TEST_CASE("export then import gives the same ops, kernels, FLOPs and bytes") {
  TrainingConfig hf = training(2, 256, 2, true);
  hf.attention_scores = AttentionScores::HuggingFaceOpt;  // kernels with broadcast bytes
  Trace t = generate_trace(*find_catalog_model("gpt3-125m"), hf);
  t.kernel_lists[1][2].measured_s = 1.25e-4;  // a measured kernel keeps its time
  const ChakraImport back = chakra_to_trace(through_file(trace_to_chakra(t), "chakra-rt.json"), std::nullopt);
  CHECK(back.report.written_by_luwusim);
  CHECK(back.trace.model == t.model);
  CHECK(back.trace.training == t.training);
  CHECK(back.trace.layers == t.layers);
  REQUIRE(back.trace.ops.size() == t.ops.size());
  for (std::size_t i = 0; i < t.ops.size(); ++i) {
    TraceOp a = t.ops[i], b = back.trace.ops[i];
    CHECK(t.kernels_of(a) == back.trace.kernels_of(b));
    a.kernels = b.kernels = 0;  // lists may be numbered differently
    CHECK(a == b);
  }
  CHECK(back.trace.flops_per_iteration() == t.flops_per_iteration());
  CHECK(back.report.compute_nodes == t.kernel_count());
  // The all-reduce hints carry every gradient byte: two micro-steps of every parameter in fp16.
  CHECK(back.report.collective_bytes_dropped == 2 * 2 * t.total_params());
  CHECK(back.report.trace_grad_bytes == back.report.collective_bytes_dropped);
}

TEST_CASE("the exported graph: one COMP_NODE per kernel launch in a chain, an all-reduce per gradient") {
  const Trace t = generate_trace(tiny_gpt(), training(1, 128, 2, false));
  const ChakraGraph g = trace_to_chakra(t);
  std::size_t comp = 0, coll = 0;
  std::uint64_t comm_bytes = 0, grad_bytes = 0;
  double num_ops = 0;
  std::optional<std::uint64_t> previous;
  for (const auto& n : g.nodes) {
    if (n.type == ChakraNodeType::Comp) {
      ++comp;
      num_ops += n.attr("num_ops")->value.get<double>();
      CHECK(n.attr("is_cpu_op")->value == false);
      if (previous) CHECK(n.data_deps == std::vector<std::uint64_t>{*previous});
      previous = n.id;
    } else {
      REQUIRE(n.type == ChakraNodeType::CommColl);
      ++coll;
      CHECK(n.attr("comm_type")->value == 0);  // ALL_REDUCE
      comm_bytes += n.attr("comm_size")->value.get<std::uint64_t>();
    }
  }
  std::size_t backward_with_grads = 0;
  for (const auto& op : t.ops) {
    grad_bytes += op.grad_bytes;
    backward_with_grads += op.grad_bytes > 0;
  }
  CHECK(comp == t.kernel_count());
  CHECK(coll == backward_with_grads);
  CHECK(comm_bytes == grad_bytes);
  // Two micro-steps each hand over every parameter's gradient (fp16, 2 bytes).
  CHECK(grad_bytes == 2 * 2 * t.total_params());
  CHECK(num_ops == doctest::Approx(t.flops_per_iteration()).epsilon(1e-12));
}

TEST_CASE("a foreign graph: GPU compute nodes time the model's kernels, CPU nodes and collectives are dropped") {
  // Chakra's jsonizer form: lowerCamelCase, 64-bit integers as strings, one object after another.
  std::string text = std::string(kMeta) + "\n";
  int id = 0;
  auto node = [&](const std::string& name, const std::string& type, int dur, const std::string& attrs) {
    text += R"({"id": ")" + std::to_string(id) + R"(", "name": ")" + name + R"(", "type": ")" + type + "\"" +
            (id > 0 ? R"(, "dataDeps": [")" + std::to_string(id - 1) + "\"]" : std::string()) +
            (dur > 0 ? R"(, "durationMicros": ")" + std::to_string(dur) + "\"" : std::string()) + R"(, "attr": [)" +
            attrs + "]}\n";
    ++id;
  };
  const std::string gpu = R"({"name": "is_cpu_op", "boolVal": false})";
  node("aten::linear", "COMP_NODE", 900, R"({"name": "is_cpu_op", "boolVal": true})");  // a CPU op
  for (int i = 0; i < 27; ++i) node("sm80_xmma_gemm_f16f16_" + std::to_string(i), "COMP_NODE", 10 + i, gpu);
  node("ncclDevKernel_AllReduce_Sum_f16_RING_LL", "COMM_COLL_NODE", 0,
       R"({"name": "comm_type", "int64Val": "0"}, {"name": "comm_size", "int64Val": "4096"})");
  node("some_kernel_without_a_duration", "COMP_NODE", 0, gpu);
  const std::string file = "chakra-foreign.json";
  {
    std::ofstream out(file);
    out << text;
  }
  TrainingConfig tc = training(2, 256, 1, false);
  tc.memory_efficient_attention = true;
  const ChakraImport imported = chakra_to_trace(load_chakra_json(file), std::pair{tiny_gpt(), tc});
  std::remove(file.c_str());
  const auto& r = imported.report;
  CHECK_FALSE(r.written_by_luwusim);
  CHECK(r.cpu_nodes == 1);
  CHECK(r.collectives_dropped == 1);
  CHECK(r.collective_bytes_dropped == 4096);
  CHECK(r.unmeasured_compute_nodes == 1);
  CHECK(r.compute_nodes == 27);
  REQUIRE(r.kernel_times);
  CHECK(r.kernel_times->kinds[0].rule == MatchRule::InOrder);
  // The 9th GEMM of one micro-step is the LM head's (4 per block, 2 blocks, then the head).
  for (const auto& op : imported.trace.ops)
    for (const auto& k : imported.trace.kernels_of(op))
      if (k.name == "lm-head") CHECK(k.measured_s == doctest::Approx(18e-6));
  // The model's structure is the generated trace's.
  CHECK(imported.trace.total_params() == generate_trace(tiny_gpt(), tc).total_params());
}

TEST_CASE("the .proto field names and integers as numbers are read too, a JSON array of the objects as well") {
  const std::string text = std::string("[") + kMeta +
                           R"(, {"id": 1, "name": "gemm_a", "type": 4, "duration_micros": 5, "attr": [{"name": "is_cpu_op", "bool_val": false}]})" +
                           R"(, {"id": 2, "name": "gemm_b", "type": "COMP_NODE", "data_deps": [1], "duration_micros": 7, "attr": [{"name": "is_cpu_op", "bool_val": false}]}])";
  const std::string file = "chakra-array.json";
  {
    std::ofstream out(file);
    out << text;
  }
  const ChakraGraph g = load_chakra_json(file);
  std::remove(file.c_str());
  REQUIRE(g.nodes.size() == 2);
  CHECK(g.nodes[1].data_deps == std::vector<std::uint64_t>{1});
  CHECK(g.nodes[1].duration_micros == 7);
  CHECK(g.nodes[0].type == ChakraNodeType::Comp);
}

TEST_CASE("bad Chakra graphs are refused with the file and the JSON path") {
  const std::string comp = R"("type": "COMP_NODE")";
  CHECK(import_error(std::string(kMeta) + R"({"id": "1", )" + comp + "}" + R"({"id": "1", )" + comp + "}", std::pair{tiny_gpt(), training(1, 64, 1, false)})
            .find("$[2].id") != std::string::npos);
  CHECK(import_error(std::string(kMeta) + R"({"id": "1", )" + comp + R"(, "dataDeps": ["7"]})", std::pair{tiny_gpt(), training(1, 64, 1, false)})
            .find("$[1].dataDeps[0]") != std::string::npos);
  CHECK(import_error(std::string(kMeta) + R"({"id": "1", )" + comp + R"(, "dataDeps": ["2"]})" + R"({"id": "2", )" + comp +
                     R"(, "dataDeps": ["1"]})", std::pair{tiny_gpt(), training(1, 64, 1, false)})
            .find("on a cycle of data dependencies") != std::string::npos);
  // Only CPU nodes: nothing to time.
  CHECK(import_error(std::string(kMeta) + R"({"id": "1", )" + comp + R"(, "durationMicros": "5"})",
                     std::pair{tiny_gpt(), training(1, 64, 1, false)})
            .find("no GPU compute node: a host-only graph (1 CPU nodes, 0 collectives, 0 other nodes)") != std::string::npos);
  // Not luwusim's, and no model named: the metadata says why.
  const std::string foreign = import_error(std::string(kMeta) + R"({"id": "1", )" + comp + "}");
  CHECK(foreign.find("chakra-bad.json") != std::string::npos);
  CHECK(foreign.find("$[0]") != std::string::npos);
  CHECK(import_error(std::string(kMeta) + R"({"id": "1", "type": "COMPUTE"})", std::pair{tiny_gpt(), training(1, 64, 1, false)})
            .find("$[1].type") != std::string::npos);
  CHECK(import_error(std::string(kMeta) + R"({"id": "x1"})", std::pair{tiny_gpt(), training(1, 64, 1, false)}).find("$[1].id") !=
        std::string::npos);
  CHECK(import_error(std::string(kMeta) + R"({"id": "1", "attr": [{"name": "num_ops", "int64Val": "1", "doubleVal": 2}]})",
                     std::pair{tiny_gpt(), training(1, 64, 1, false)})
            .find("$[1].attr[0]") != std::string::npos);
  CHECK(import_error(std::string(kMeta) + R"({"id": "1", "colour": 3})", std::pair{tiny_gpt(), training(1, 64, 1, false)})
            .find("$[1].colour") != std::string::npos);
  CHECK(import_error(std::string(kMeta) + "{\"id\": ").find("$[1]") != std::string::npos);
}

TEST_CASE("control dependencies as Chakra's converter writes them: a root not in the file, and a cycle, are dropped") {
  // Three GPU GEMMs in data order 1 -> 2 -> 3; each names control root 0, which the file lacks, and
  // node 1 waits (by control) for node 3: a cycle with the data dependencies.
  const std::string gpu = R"("type": "COMP_NODE", "attr": [{"name": "is_cpu_op", "boolVal": false}])";
  const std::string text = std::string(kMeta) + "\n" +
                           R"({"id": "1", "name": "sm80_gemm_a", "ctrlDeps": ["0", "3"], "durationMicros": "5", )" + gpu + "}\n" +
                           R"({"id": "2", "name": "sm80_gemm_b", "dataDeps": ["1"], "ctrlDeps": ["0"], "durationMicros": "6", )" +
                           gpu + "}\n" +
                           R"({"id": "3", "name": "sm80_gemm_c", "dataDeps": ["2"], "ctrlDeps": ["0", "2"], "durationMicros": "7", )" +
                           gpu + "}\n";
  const std::string file = "chakra-ctrl.json";
  {
    std::ofstream out(file);
    out << text;
  }
  const ChakraImport imported = chakra_to_trace(load_chakra_json(file), std::pair{tiny_gpt(), training(1, 64, 1, false)});
  std::remove(file.c_str());
  CHECK(imported.report.ctrl_deps_unresolved == 3);  // the three on root 0
  CHECK(imported.report.ctrl_deps_cyclic == 2);      // 1 on 3 closes a cycle: the resolvable ones go with it
  CHECK(imported.report.compute_nodes == 3);
  const Json j = chakra_import_report_to_json(imported.report);
  CHECK(j["ctrl_deps_dropped_unresolved"] == 3);
  CHECK(j["ctrl_deps_dropped_cyclic"] == 2);
}

TEST_CASE("a luwusim graph whose attributes break the trace is refused as the trace file would be") {
  const Trace t = generate_trace(tiny_gpt(), training(1, 64, 1, false));
  ChakraGraph g = trace_to_chakra(t);
  for (auto& a : g.nodes[1].attrs)
    if (a.name == "luwusim.flops") a.value = a.value.get<double>() + 1e6;  // the op's kernels no longer add up
  CHECK_THROWS_WITH_AS(chakra_to_trace(through_file(g, "chakra-broken.json"), std::nullopt),
                       doctest::Contains("flops"), InputError);
}

TEST_CASE("a Chakra file that is missing, a directory or empty is an input error naming it") {
  CHECK_THROWS_WITH_AS(load_chakra_json("no-such-chakra.json"), doctest::Contains("no-such-chakra.json"), InputError);
  CHECK_THROWS_AS(load_chakra_json("."), InputError);
  {
    std::ofstream out("chakra-empty.json");
  }
  CHECK_THROWS_WITH_AS(load_chakra_json("chakra-empty.json"), doctest::Contains("GlobalMetadata"), InputError);
  std::remove("chakra-empty.json");
}

TEST_CASE("a foreign graph's GPU kernel of more than an hour is refused at import, naming the node") {
  // 1e16 us, 317 years: `trace import-chakra` used to write it into a trace that `run` then refused.
  std::string text = std::string(kMeta) + "\n";
  text += R"({"id": "0", "name": "sm80_xmma_gemm_f16f16_0", "type": "COMP_NODE", "durationMicros": "10000000000000000",)"
          R"( "attr": [{"name": "is_cpu_op", "boolVal": false}]})" "\n";
  const std::string file = "chakra-317-years.json";
  {
    std::ofstream out(file);
    out << text;
  }
  TrainingConfig tc = training(2, 256, 1, false);
  CHECK_THROWS_WITH_AS(chakra_to_trace(load_chakra_json(file), std::pair{tiny_gpt(), tc}),
                       doctest::Contains("duration_micros"), luwu::InputError);
  std::remove(file.c_str());
}

TEST_CASE("PyTorch's own execution trace (Chakra's converter's input, PARAM's test data) is named and refused") {
  // The shape of facebookresearch/param's et_replay/tests/inputs/linear_et.json: a schema, host
  // nodes with op schemas and shapes, no GPU kernels.
  {
    std::ofstream out("pytorch-et.json");
    out << R"et({"schema": "1.0.1", "pid": 1, "time": "2023-07-12 12:47:27", "start_ts": 1, "nodes": [
      {"name": "aten::addmm", "id": 14, "rf_id": 5, "parent": 9, "op_schema": "aten::addmm(...)",
       "inputs": [], "input_shapes": [[1024], [512, 1024], [1024, 1024]], "input_types": [],
       "outputs": [], "output_shapes": [], "output_types": []}], "finish_ts": 2})et";
  }
  try {
    load_chakra_json("pytorch-et.json");
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(e.json_path() == "$");
    CHECK(std::string(e.what()).find("PyTorch execution trace (schema 1.0.1)") != std::string::npos);
    CHECK(std::string(e.what()).find("chakra_converter") != std::string::npos);
  }
  std::remove("pytorch-et.json");
}
