// Chakra's binary form (.et) and the feeder's workload_graph JSON: a file encoded by hand from the
// protobuf wire format (not by our writer) reads as the graph it spells; luwusim's export through
// .et (plain and gzipped) imports as through JSON; graphs with the shapes real files have
// (dangling control roots, cycles, communication only) are handled as in the JSON form; bad bytes
// are refused at their place.
#include <doctest/doctest.h>

#include <cstdio>
#include <fstream>
#include <string>

#include <google/protobuf/io/gzip_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "common/input_error.hpp"
#include "workloads/chakra_et.hpp"
#include "workloads/model_catalog.hpp"
#include "workloads/trace.hpp"

using namespace luwu;
using namespace luwu::workloads;

namespace {

TrainingConfig training(int b, int s) {
  TrainingConfig t;
  t.micro_batch = b;
  t.seq_len = s;
  return t;
}

ModelConfig tiny_gpt() {
  const Json j = {{"name", "tiny-gpt"}, {"layers", 2}, {"hidden", 256}, {"heads", 4}, {"vocab", 1024}, {"max_seq", 512}};
  return model_from_json(JsonNode(j, "inline"));
}

void write(const std::string& file, const std::string& bytes) {
  std::ofstream out(file, std::ios::binary);
  out << bytes;
}

std::string error_of(const std::string& file, const std::string& bytes) {
  write(file, bytes);
  std::string what;
  try {
    chakra_to_trace(load_chakra(file), std::pair{tiny_gpt(), training(1, 64)});
  } catch (const InputError& e) {
    what = e.what();
  }
  std::remove(file.c_str());
  return what;
}

// Protobuf's wire format, spelled out (developers.google.com/protocol-buffers/docs/encoding):
// a field's key is (number << 3) | wire type; varints are 7 bits a byte, low first.
std::string varint(std::uint64_t v) {
  std::string out;
  do {
    out += static_cast<char>((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
    v >>= 7;
  } while (v);
  return out;
}
std::string key(int number, int wire_type) { return varint(static_cast<std::uint64_t>(number << 3 | wire_type)); }
std::string vfield(int number, std::uint64_t v) { return key(number, 0) + varint(v); }
std::string lfield(int number, const std::string& body) { return key(number, 2) + varint(body.size()) + body; }
std::string delimited(const std::string& message) { return varint(message.size()) + message; }

// GlobalMetadata{version "0.0.4"}; Node{id, name, type 4, ...}; AttributeProto{name, bool_val 27}.
const std::string kMetadata = delimited(lfield(1, "0.0.4"));
std::string gpu_flag() { return lfield(10, lfield(1, "is_cpu_op") + vfield(27, 0)); }
std::string gpu_node(std::uint64_t id, const std::string& name, std::uint64_t micros, const std::string& extra = "") {
  return delimited(vfield(1, id) + lfield(2, name) + vfield(3, 4) + vfield(7, micros) + extra + gpu_flag());
}

}  // namespace

TEST_CASE("an .et file encoded by hand from the wire format reads as the graph it spells") {
  // Node 2 depends on node 1 by data (field 5, packed) and on a control root 0 the file lacks
  // (field 4), as Chakra's converter writes them; an int64 attribute (field 9) and a string list
  // (field 30 holding StringList{values}) ride along.
  const std::string bytes = kMetadata + gpu_node(1, "sm80_xmma_gemm_a", 5) +
                            gpu_node(2, "sm80_xmma_gemm_b", 7,
                                     lfield(4, varint(0)) + lfield(5, varint(1)) +
                                         lfield(10, lfield(1, "num_ops") + vfield(9, 123456789012ull)) +
                                         lfield(10, lfield(1, "tags") + lfield(30, lfield(1, "x") + lfield(1, "yz"))));
  write("hand.et", bytes);
  const ChakraGraph g = load_chakra_et("hand.et");
  std::remove("hand.et");
  CHECK(g.version == "0.0.4");
  REQUIRE(g.nodes.size() == 2);
  CHECK(g.nodes[0].id == 1);
  CHECK(g.nodes[0].name == "sm80_xmma_gemm_a");
  CHECK(g.nodes[0].type == ChakraNodeType::Comp);
  CHECK(g.nodes[0].duration_micros == 5);
  CHECK(g.nodes[0].attr("is_cpu_op")->field == "bool_val");
  CHECK(g.nodes[0].attr("is_cpu_op")->value == false);
  CHECK(g.nodes[1].data_deps == std::vector<std::uint64_t>{1});
  CHECK(g.nodes[1].ctrl_deps == std::vector<std::uint64_t>{0});
  CHECK(g.nodes[1].attr("num_ops")->field == "int64_val");
  CHECK(g.nodes[1].attr("num_ops")->value == 123456789012ll);
  CHECK(g.nodes[1].attr("tags")->value == Json::array({"x", "yz"}));
  CHECK(g.nodes[1].attr("tags")->path == "$[2].attr[1]");  // extra attributes come before is_cpu_op
  // Imported as the JSON form would be: both kernels measured, the control root dropped.
  const ChakraImport imported = chakra_to_trace(g, std::pair{tiny_gpt(), training(1, 64)});
  CHECK(imported.report.compute_nodes == 2);
  CHECK(imported.report.ctrl_deps_unresolved == 1);
}

TEST_CASE("luwusim's export through .et, plain and gzipped, imports as through JSON") {
  Trace t = generate_trace(*find_catalog_model("gpt3-125m"), training(2, 128));
  t.kernel_lists[1][2].measured_s = 1.25e-4;
  const ChakraGraph g = trace_to_chakra(t);
  save_chakra(g, "rt.et");
  save_chakra(g, "rt.json");
  const ChakraGraph via_et = load_chakra("rt.et"), via_json = load_chakra("rt.json");
  // Gzipped as Chakra's protolib reads it (openFileRd tries gzip first).
  std::string plain;
  {
    std::ifstream in("rt.et", std::ios::binary);
    plain.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  std::string packed;
  {
    google::protobuf::io::StringOutputStream sink(&packed);
    google::protobuf::io::GzipOutputStream::Options options;
    options.format = google::protobuf::io::GzipOutputStream::GZIP;
    google::protobuf::io::GzipOutputStream gz(&sink, options);
    void* chunk = nullptr;
    int size = 0;
    std::size_t at = 0;
    while (at < plain.size() && gz.Next(&chunk, &size)) {
      const std::size_t n = std::min<std::size_t>(static_cast<std::size_t>(size), plain.size() - at);
      std::copy_n(plain.data() + at, n, static_cast<char*>(chunk));
      at += n;
      if (n < static_cast<std::size_t>(size)) gz.BackUp(size - static_cast<int>(n));
    }
    REQUIRE(gz.Close());
  }
  write("rt.et.gz", packed);
  const ChakraGraph via_gz = load_chakra("rt.et.gz");
  for (const char* f : {"rt.et", "rt.json", "rt.et.gz"}) std::remove(f);
  REQUIRE(packed.size() < plain.size());
  for (const ChakraGraph* back : {&via_et, &via_gz}) {
    CHECK(back->version == via_json.version);
    REQUIRE(back->nodes.size() == via_json.nodes.size());
    for (std::size_t i = 0; i < back->nodes.size(); ++i) {
      const ChakraNode &a = back->nodes[i], &b = via_json.nodes[i];
      CHECK(a.id == b.id);
      CHECK(a.name == b.name);
      CHECK(a.type == b.type);
      CHECK(a.data_deps == b.data_deps);
      CHECK(a.duration_micros == b.duration_micros);
      REQUIRE(a.attrs.size() == b.attrs.size());
      for (std::size_t k = 0; k < a.attrs.size(); ++k) {
        CHECK(a.attrs[k].field == b.attrs[k].field);
        CHECK(a.attrs[k].value == b.attrs[k].value);
      }
    }
    const ChakraImport imported = chakra_to_trace(*back, std::nullopt);
    CHECK(imported.report.written_by_luwusim);
    CHECK(imported.trace.flops_per_iteration() == t.flops_per_iteration());
    CHECK(imported.trace.kernel_count() == t.kernel_count());
  }
  CHECK_THROWS_AS(save_chakra(g, "rt.et.gz"), InputError);  // written plain only
}

TEST_CASE("a communication-only .et (ASTRA-sim's collective microbenchmarks) is refused: it times no kernel") {
  // One COMM_COLL_NODE (type 7) ALL_REDUCE of 1 MiB, as the microbenchmarks spell it.
  const std::string coll = delimited(vfield(1, 0) + lfield(2, "all_reduce") + vfield(3, 7) +
                                     lfield(10, lfield(1, "is_cpu_op") + vfield(27, 0)) +
                                     lfield(10, lfield(1, "comm_type") + vfield(9, 0)) +
                                     lfield(10, lfield(1, "comm_size") + vfield(9, 1 << 20)));
  CHECK(error_of("coll.et", kMetadata + coll).find("a communication-only graph (0 CPU nodes, 1 collectives, 0 other nodes)") !=
        std::string::npos);
}

TEST_CASE("bad .et bytes are refused with the file and the message's place") {
  const std::string good = kMetadata + gpu_node(1, "sm80_xmma_gemm_a", 5);
  CHECK(error_of("cut.et", good.substr(0, good.size() - 3)).find("$[1]: the message is cut off") != std::string::npos);
  CHECK(error_of("type.et", kMetadata + delimited(vfield(1, 1) + vfield(3, 42))).find("$[1].type") != std::string::npos);
  CHECK(error_of("utf8.et", kMetadata + delimited(vfield(1, 1) + lfield(2, "\xff\xfe"))).find("$[1].name") != std::string::npos);
  // A double attribute (field 3, wire type 1) that is not a number.
  const std::string nan = key(3, 1) + std::string("\x00\x00\x00\x00\x00\x00\xf8\x7f", 8);
  CHECK(error_of("nan.et", kMetadata + delimited(vfield(1, 1) + lfield(10, lfield(1, "x") + nan)))
            .find("$[1].attr[0].double_val") != std::string::npos);
  CHECK(error_of("garbage.et", kMetadata + delimited("\xff\xff\xff")).find("garbage.et") != std::string::npos);
  CHECK(error_of("varint.et", std::string(12, '\xff')).find("not a valid varint32") != std::string::npos);
  CHECK(error_of("empty.et", "").find("GlobalMetadata") != std::string::npos);
  std::string not_gzip = "not really gzip";
  not_gzip.insert(0, "\x1f\x8b");  // gzip's magic, then no deflate stream
  CHECK(error_of("bad.et.gz", not_gzip).find("gzip") != std::string::npos);
}

TEST_CASE("the feeder's workload_graph JSON form: nodes by Id, runtime as the duration, strict keys") {
  const std::string text = R"({"workload_graph": [
    {"Id": 1, "Name": "sm80_xmma_gemm_a", "NodeType": 4, "is_cpu_op": false, "runtime": 5, "data_deps": []},
    {"Id": 2, "Name": "sm80_xmma_gemm_b", "NodeType": 4, "is_cpu_op": false, "runtime": 7, "data_deps": [1]},
    {"Id": 3, "Name": "aten::add", "NodeType": 4, "is_cpu_op": true, "runtime": 2, "data_deps": [2]},
    {"Id": 4, "Name": "all_reduce", "NodeType": 7, "is_cpu_op": false, "data_deps": [2], "comm_type": 0,
     "comm_size": 4096, "comm_priority": 0, "involved_dim": [true]}]})";
  write("wg.json", text);
  const ChakraGraph g = load_chakra("wg.json");
  REQUIRE(g.nodes.size() == 4);
  CHECK(g.nodes[1].data_deps == std::vector<std::uint64_t>{1});
  CHECK(g.nodes[1].duration_micros == 7);
  CHECK(g.nodes[3].type == ChakraNodeType::CommColl);
  const ChakraImport imported = chakra_to_trace(g, std::pair{tiny_gpt(), training(1, 64)});
  CHECK(imported.report.compute_nodes == 2);
  CHECK(imported.report.cpu_nodes == 1);
  CHECK(imported.report.collectives_dropped == 1);
  CHECK(imported.report.collective_bytes_dropped == 4096);
  std::remove("wg.json");
  CHECK(error_of("wg-bad.json", R"({"workload_graph": [{"Id": 1, "colour": 3}]})").find("$.workload_graph[0].colour") !=
        std::string::npos);
  CHECK(error_of("wg-noid.json", R"({"workload_graph": [{"Name": "x"}]})").find("$.workload_graph[0]") != std::string::npos);
  CHECK(error_of("wg-extra.json", R"({"workload_graph": [], "other": 1})").find("$.other") != std::string::npos);
}

TEST_CASE("a graph's host multiplies (inputs.shapes, as Chakra's converter writes them) must be the model's") {
  // tiny-gpt at micro-batch 1, sequence 64: the QKV projection multiplies 64 x 256 by 256 x 768.
  // The converter numbers an op's parts ("aten::mm(0)") and writes Python's str() of the shapes.
  auto host_mm = [](std::uint64_t id, const std::string& shapes) {
    return delimited(vfield(1, id) + lfield(2, "aten::mm(0)") + vfield(3, 4) + lfield(8, lfield(2, shapes)) +
                     lfield(10, lfield(1, "is_cpu_op") + vfield(27, 1)));
  };
  const std::string kernels = gpu_node(1, "sm80_xmma_gemm_a", 5);
  CHECK(error_of("fits.et", kMetadata + kernels + host_mm(2, "[[64, 256], [256, 768]]")).empty());
  // A ResNet-50's classifier (chakra.0.et of Chakra's own test data multiplies these).
  const std::string what = error_of("resnet.et", kMetadata + kernels + host_mm(2, "[[32, 1000], [1000, 2048]]"));
  CHECK(what.find("resnet.et: at $[2].inputs.shapes: the profile's aten::mm multiplies 32 x 1000 by 1000 x 2048") !=
        std::string::npos);
}
