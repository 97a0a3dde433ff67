#include <doctest/doctest.h>

#include <cmath>

#include "common/input_error.hpp"
#include "workloads/layer_accounting.hpp"
#include "workloads/model_catalog.hpp"

using namespace luwu;
using namespace luwu::workloads;

namespace {

ModelConfig parse(const std::string& text) {
  static Json doc;  // JsonNode keeps a pointer; keep the document alive for the call
  doc = Json::parse(text);
  return model_from_json(JsonNode(doc, "model.json"));
}

// The InputError message (with file and JSON path) of parsing `text`, or "" if it parsed.
std::string parse_error(const std::string& text) {
  try {
    parse(text);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::uint64_t total_params(const ModelConfig& m) {
  return embedding_params(m) + static_cast<std::uint64_t>(m.layers) * transformer_block_params(m) + head_params(m);
}

}  // namespace

TEST_CASE("the catalog holds the published models sorted and with sources") {
  auto names = catalog_model_names();
  CHECK(names.size() == 29);
  CHECK(std::is_sorted(names.begin(), names.end()));
  for (const char* n : {"gpt3-125m", "gpt3-350m", "gpt3-760m", "gpt3-1.3b", "gpt3-2.7b", "gpt3-6.7b", "gpt3-13b",
                        "gpt3-175b", "megatron-18.4b", "megatron-39.1b", "megatron-76.1b", "megatron-145.6b", "opt-30b",
                        "opt-66b", "llama2-7b", "llama2-13b", "llama2-70b", "bert-large", "mixtral-8x7b", "deepseek-moe-16b"}) {
    const ModelConfig* m = find_catalog_model(n);
    REQUIRE_MESSAGE(m != nullptr, n);
    CHECK(m->name == n);
    CHECK(!m->source.empty());
    CHECK(m->heads % m->kv_heads == 0);
  }
  CHECK(find_catalog_model("gpt3-176b") == nullptr);
  const ModelConfig& l70 = *find_catalog_model("llama2-70b");
  CHECK(l70.kv_heads == 8);
  CHECK(l70.ffn_kind == FfnKind::SwiGlu);
  CHECK(!l70.tied_embeddings);
}

TEST_CASE("GPT-3 175B has 174.6B parameters") {
  // Per block 12h^2 + 13h (QKV+O 4h^2 + 4h bias, FFN 8h^2 + 5h bias, two LayerNorms 4h), plus
  // token (50257 h) and position (2048 h) embeddings and the final LayerNorm (2h).
  const double h = 12288;
  const double expected = 96 * (12 * h * h + 13 * h) + 50257 * h + 2048 * h + 2 * h;
  const double counted = static_cast<double>(total_params(*find_catalog_model("gpt3-175b")));
  CHECK(counted == doctest::Approx(expected).epsilon(1e-12));
  CHECK(counted == doctest::Approx(174.6e9).epsilon(0.005));  // published: 174.6B (Narayanan et al. 2021)
}

TEST_CASE("LLaMA-2 parameter counts match the published 6.74B and 68.98B") {
  // Published by Meta for the released checkpoints: 6,738,415,616 and 68,976,648,192 parameters.
  CHECK(static_cast<double>(total_params(*find_catalog_model("llama2-7b"))) == doctest::Approx(6.74e9).epsilon(0.01));
  CHECK(static_cast<double>(total_params(*find_catalog_model("llama2-70b"))) == doctest::Approx(68.98e9).epsilon(0.01));
  // 70B by hand: attention q,o 2h^2 + k,v 2*h*1024 (8 of 64 heads), SwiGLU 3*h*28672, two RMSNorms 2h;
  // untied embedding and LM head 2*32000*h, final RMSNorm h.
  const double h = 8192;
  const double block = 2 * h * h + 2 * h * 1024 + 3 * h * 28672 + 2 * h;
  CHECK(static_cast<double>(total_params(*find_catalog_model("llama2-70b"))) == 80 * block + 2 * 32000 * h + h);
}

TEST_CASE("other catalog models land near their nominal sizes") {
  // Nominal sizes in the model names; our counts exclude nothing larger than 1% of the model.
  const std::pair<const char*, double> nominal[] = {
      {"gpt3-350m", 350e6},       {"gpt3-1.3b", 1.3e9},       {"gpt3-2.7b", 2.7e9},        {"gpt3-6.7b", 6.7e9},
      {"gpt3-13b", 13e9},         {"megatron-18.4b", 18.4e9}, {"megatron-39.1b", 39.1e9},  {"megatron-76.1b", 76.1e9},
      {"megatron-145.6b", 145.6e9}, {"opt-30b", 30e9},         {"opt-66b", 66e9},           {"llama2-13b", 13e9}};
  for (const auto& [name, size] : nominal) {
    CAPTURE(name);
    CHECK(static_cast<double>(total_params(*find_catalog_model(name))) == doctest::Approx(size).epsilon(0.03));
  }
}

TEST_CASE("an inline model: defaults describe a GPT-style model") {
  ModelConfig m = parse(R"({"name": "tiny", "layers": 2, "hidden": 64, "heads": 4, "vocab": 100, "max_seq": 32})");
  CHECK(m.name == "tiny");
  CHECK(m.kv_heads == 4);
  CHECK(m.ffn_hidden == 256);
  CHECK(m.ffn_kind == FfnKind::Gelu);
  CHECK(m.tied_embeddings);
  CHECK(m.biases);
  // Round trip through JSON keeps every field.
  Json again = model_to_json(m);
  CHECK(model_from_json(JsonNode(again, "again.json")) == m);
}

TEST_CASE("qkv_projections: fused by default, separate as Hugging Face's OPT projects them") {
  CHECK_FALSE(parse(R"({"layers": 2, "hidden": 64, "heads": 4, "vocab": 100, "max_seq": 32})").separate_qkv);
  ModelConfig m = parse(R"({"layers": 2, "hidden": 64, "heads": 4, "vocab": 100, "max_seq": 32, "qkv_projections": "separate"})");
  CHECK(m.separate_qkv);
  Json again = model_to_json(m);
  CHECK(again.at("qkv_projections") == "separate");
  CHECK(model_from_json(JsonNode(again, "again.json")).separate_qkv);
  CHECK_THROWS_AS(parse(R"({"layers": 2, "hidden": 64, "heads": 4, "vocab": 100, "max_seq": 32, "qkv_projections": "split"})"),
                  InputError);
}

TEST_CASE("an inline SwiGLU model with grouped-query attention") {
  ModelConfig m = parse(R"({"layers": 2, "hidden": 64, "heads": 8, "kv_heads": 2, "ffn_hidden": 160,
      "ffn_kind": "swiglu", "vocab": 100, "max_seq": 32, "tied_embeddings": false, "norm": "rmsnorm",
      "position_embedding": "rotary", "biases": false})");
  CHECK(m.kv_width() == 16);
  // q, o: 64x64 each; k, v: 64x16 each; FFN 3 x 64 x 160; two RMSNorms 64 each.
  CHECK(transformer_block_params(m) == 2 * 64 * 64 + 2 * 64 * 16 + 3 * 64 * 160 + 2 * 64);
  CHECK(embedding_params(m) == 100 * 64);
  CHECK(head_params(m) == 64 + 100 * 64);
}

TEST_CASE("inline model errors name the JSON path") {
  const std::string base = R"("layers": 2, "hidden": 64, "heads": 4, "vocab": 100, "max_seq": 32)";
  std::string e = parse_error("{" + base + R"(, "hiden": 64})");
  CHECK(contains(e, "model.json"));
  CHECK(contains(e, "$.hiden"));
  CHECK(contains(e, "did you mean \"hidden\""));

  e = parse_error(R"({"layers": 0, "hidden": 64, "heads": 4, "vocab": 100, "max_seq": 32})");
  CHECK(contains(e, "$.layers"));
  e = parse_error(R"({"layers": 2, "hidden": -64, "heads": 4, "vocab": 100, "max_seq": 32})");
  CHECK(contains(e, "$.hidden"));
  e = parse_error(R"({"layers": 2, "hidden": 66, "heads": 4, "vocab": 100, "max_seq": 32})");
  CHECK(contains(e, "$.hidden"));
  CHECK(contains(e, "divisible"));
  e = parse_error("{" + base + R"(, "kv_heads": 3})");
  CHECK(contains(e, "$.kv_heads"));
  e = parse_error("{" + base + R"(, "ffn_kind": "swiglu"})");  // SwiGLU needs its width
  CHECK(contains(e, "ffn_hidden"));
  e = parse_error("{" + base + R"(, "ffn_kind": "geglu"})");
  CHECK(contains(e, "$.ffn_kind"));
  CHECK(contains(e, "did you mean \"gelu\""));
  e = parse_error(R"({"layers": 2, "hidden": 64, "heads": 4, "max_seq": 32})");
  CHECK(contains(e, "vocab"));
  e = parse_error("{" + base + R"(, "tied_embeddings": "yes"})");
  CHECK(contains(e, "$.tied_embeddings"));
  e = parse_error("[1, 2]");
  CHECK(contains(e, "expected an object"));
}

TEST_CASE("a catalog entry repeated field for field is accepted even when heads do not divide hidden") {
  const ModelConfig& gpt13 = *find_catalog_model("gpt3-13b");
  REQUIRE(gpt13.hidden % gpt13.heads != 0);  // 5140 / 40, as published
  Json j = model_to_json(gpt13);
  CHECK(model_from_json(JsonNode(j, "m.json")) == gpt13);
  j["name"] = "my-13b";  // the same shape under another name is an ordinary inline model
  CHECK_THROWS_AS(model_from_json(JsonNode(j, "m.json")), InputError);
}

TEST_CASE("resolve_model takes catalog names and files and suggests names") {
  CHECK(resolve_model("llama2-13b").hidden == 5120);
  try {
    resolve_model("gpt3-175");
    FAIL("expected an InputError");
  } catch (const InputError& e) {
    CHECK(contains(e.what(), "did you mean \"gpt3-175b\""));
  }
}

TEST_CASE("the LuWu paper's OPT-architecture shapes have 12h^2 + 13h per block plus embeddings") {
  // Blocks, hidden: the LuWu paper's setup table; vocabulary 50272 and 2048 positions (OPT).
  struct Shape {
    const char* name;
    std::uint64_t layers, hidden;
    double published;  // the name's size
  };
  for (const Shape& m : {Shape{"opt-1.3b", 24, 2048, 1.3e9}, Shape{"opt-13b", 40, 5120, 13e9},
                         Shape{"custom-175b", 96, 12288, 175e9}, Shape{"custom-276b", 112, 14336, 276e9},
                         Shape{"custom-505b", 124, 18432, 505e9}, Shape{"custom-1.0t", 172, 22016, 1.0e12}}) {
    CAPTURE(m.name);
    const auto* model = find_catalog_model(m.name);
    REQUIRE(model != nullptr);
    const std::uint64_t h = m.hidden;
    const std::uint64_t by_hand = m.layers * (12 * h * h + 13 * h) + (50272 + 2048) * h + 2 * h;
    CHECK(total_params(*model) == by_hand);
    CHECK(static_cast<double>(by_hand) == doctest::Approx(m.published).epsilon(0.03));
  }
}
