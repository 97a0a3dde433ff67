// Chakra execution traces in their JSON form: reading (strict, with JSON paths), writing, and the
// conversions to and from luwusim traces (the mapping: chakra_json.hpp).
#include "workloads/chakra_json.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <queue>
#include <sstream>

#include "common/atomic_write.hpp"
#include "workloads/training_json.hpp"

namespace luwu::workloads {

namespace {

constexpr const char* kChakraVersion = "0.0.4";             // GlobalMetadata.version Chakra's tools write
constexpr const char* kChakraSchema = "1.0.2-chakra.0.0.4";  // the "schema" attribute they write

const std::vector<std::string>& node_type_names() {
  static const std::vector<std::string> names = {"INVALID_NODE",   "METADATA_NODE",  "MEM_LOAD_NODE", "MEM_STORE_NODE",
                                                 "COMP_NODE",      "COMM_SEND_NODE", "COMM_RECV_NODE", "COMM_COLL_NODE",
                                                 "STORAGE_NODE",   "BATCH_NODE",     "CHECKPOINT_NODE"};
  return names;
}
constexpr std::int64_t kAllReduce = 0;  // CollectiveCommType.ALL_REDUCE

// AttributeProto's value fields, snake_case as in et_def.proto.
const std::vector<std::string>& attr_fields() {
  static const std::vector<std::string> fields = {
      "double_val",  "double_list",  "float_val",    "float_list",    "int32_val",    "int32_list",   "int64_val",
      "int64_list",  "uint32_val",   "uint32_list",  "uint64_val",    "uint64_list",  "sint32_val",   "sint32_list",
      "sint64_val",  "sint64_list",  "fixed32_val",  "fixed32_list",  "fixed64_val",  "fixed64_list", "sfixed32_val",
      "sfixed32_list", "sfixed64_val", "sfixed64_list", "bool_val",   "bool_list",    "string_val",   "string_list",
      "bytes_val",   "bytes_list"};
  return fields;
}

std::string camel(const std::string& snake) {
  std::string out;
  for (std::size_t i = 0; i < snake.size(); ++i) {
    if (snake[i] == '_' && i + 1 < snake.size()) out += static_cast<char>(std::toupper(static_cast<unsigned char>(snake[++i])));
    else out += snake[i];
  }
  return out;
}

bool is_64bit(const std::string& field) {
  return field.find("64") != std::string::npos && field.find("double") == std::string::npos;
}
bool is_integer_field(const std::string& field) {
  return field.find("int") != std::string::npos || field.find("fixed") != std::string::npos;
}

// A field under its lowerCamelCase or its .proto name (not both); nullopt when absent.
std::optional<JsonNode> field(const JsonNode& obj, const std::string& snake) {
  const std::string c = camel(snake);
  if (obj.has(c) && c != snake && obj.has(snake)) obj.at(snake).fail("both \"" + c + "\" and \"" + snake + "\" given");
  if (obj.has(c)) return obj.at(c);
  if (obj.has(snake)) return obj.at(snake);
  return std::nullopt;
}

// Proto3 JSON integers: a number, or a string of one (how 64-bit ones are written).
Json integer_of(const JsonNode& n, bool is_unsigned) {
  if (n.is_string()) {
    const std::string s = n.as_string();
    std::size_t used = 0;
    try {
      if (is_unsigned) {
        if (s.empty() || s[0] == '-') n.fail("expected an unsigned integer, found \"" + s + "\"");
        const unsigned long long v = std::stoull(s, &used);
        if (used == s.size()) return Json(static_cast<std::uint64_t>(v));
      } else {
        const long long v = std::stoll(s, &used);
        if (used == s.size()) return Json(static_cast<std::int64_t>(v));
      }
    } catch (const std::logic_error&) {
    }
    n.fail("expected an integer, found \"" + s + "\"");
  }
  if (is_unsigned) return Json(static_cast<std::uint64_t>(n.as_int(0)));
  return Json(n.as_int());
}

std::uint64_t u64_of(const JsonNode& n) { return integer_of(n, true).get<std::uint64_t>(); }

Json scalar_of(const JsonNode& n, const std::string& field) {
  if (is_integer_field(field)) return integer_of(n, field.find("uint") != std::string::npos || field.find("fixed") == 0);
  if (field.starts_with("bool")) return n.as_bool();
  if (field.starts_with("string") || field.starts_with("bytes")) return n.as_string();
  return n.as_number();  // double, float
}

std::vector<std::string> spellings(const std::vector<std::string>& snake) {
  std::vector<std::string> all;
  for (const auto& s : snake) {
    all.push_back(s);
    if (camel(s) != s) all.push_back(camel(s));
  }
  return all;
}

ChakraAttr attr_from_json(const JsonNode& n) {
  std::vector<std::string> known = {"name", "doc_string"};
  known.insert(known.end(), attr_fields().begin(), attr_fields().end());
  n.only_keys(spellings(known));
  ChakraAttr a;
  a.path = n.path();
  a.name = n.at("name").as_string();
  for (const auto& f : attr_fields()) {
    const auto v = field(n, f);
    if (!v) continue;
    if (!a.field.empty()) v->fail("an attribute holds one value; this one also has " + a.field);
    a.field = f;
    if (f.ends_with("_list")) {
      const std::string scalar = f.substr(0, f.size() - 5) + "_val";
      a.value = Json::array();
      if (v->has("values")) {
        v->only_keys({"values"});
        const JsonNode values = v->at("values");
        for (std::size_t i = 0; i < values.size(); ++i) a.value.push_back(scalar_of(values.at(i), scalar));
      } else {
        v->only_keys({});
      }
    } else {
      a.value = scalar_of(*v, f);
    }
  }
  return a;
}

std::vector<ChakraAttr> attrs_from_json(const JsonNode& obj) {
  std::vector<ChakraAttr> attrs;
  if (const auto list = field(obj, "attr"))
    for (std::size_t i = 0; i < list->size(); ++i) attrs.push_back(attr_from_json(list->at(i)));
  return attrs;
}

std::vector<std::uint64_t> ids_of(const std::optional<JsonNode>& list) {
  std::vector<std::uint64_t> ids;
  if (list)
    for (std::size_t i = 0; i < list->size(); ++i) ids.push_back(u64_of(list->at(i)));
  return ids;
}

ChakraNode node_from_json(const JsonNode& n) {
  n.only_keys(spellings({"id", "name", "type", "ctrl_deps", "data_deps", "start_time_micros", "duration_micros", "inputs",
                         "outputs", "attr", "storage"}));
  ChakraNode node;
  node.path = n.path();
  if (n.has("id")) node.id = u64_of(n.at("id"));
  node.name = n.get_string("name", "");
  if (n.has("type")) {
    const JsonNode t = n.at("type");
    node.type = static_cast<ChakraNodeType>(
        t.is_string() ? t.as_choice_index(node_type_names(), "node type")
                      : static_cast<std::size_t>(t.as_int(0, static_cast<std::int64_t>(node_type_names().size()) - 1)));
  }
  node.ctrl_deps = ids_of(field(n, "ctrl_deps"));
  node.data_deps = ids_of(field(n, "data_deps"));
  if (const auto v = field(n, "start_time_micros")) node.start_time_micros = u64_of(*v);
  if (const auto v = field(n, "duration_micros")) node.duration_micros = u64_of(*v);
  if (const auto inputs = field(n, "inputs"); inputs && inputs->has("shapes")) node.input_shapes = inputs->at("shapes").as_string();
  node.attrs = attrs_from_json(n);
  return node;
}

Json attr_to_json(const ChakraAttr& a) {
  Json j{{"name", a.name}};
  if (a.field.empty()) return j;
  auto out = [&](const Json& v) { return is_64bit(a.field) && v.is_number() ? Json(v.dump()) : v; };
  if (a.field.ends_with("_list")) {
    Json values = Json::array();
    for (const auto& v : a.value) values.push_back(out(v));
    j[camel(a.field)] = Json{{"values", values}};
  } else {
    j[camel(a.field)] = out(a.value);
  }
  return j;
}

Json ids_to_json(const std::vector<std::uint64_t>& ids) {
  Json j = Json::array();
  for (auto id : ids) j.push_back(std::to_string(id));
  return j;
}

// The text of the file, with load_json_file's checks on what may be read.
std::string read_text(const std::string& file) {
  std::error_code ec;
  const auto status = std::filesystem::status(file, ec);
  if (!std::filesystem::exists(status)) throw InputError(file, "", "cannot open file: no such file");
  if (!std::filesystem::is_regular_file(status)) throw InputError(file, "", "is not a regular file; give a Chakra JSON file");
  if (std::filesystem::file_size(file, ec) > kMaxInputFileBytes)
    throw InputError(file, "", "is over " + std::to_string(kMaxInputFileBytes >> 20) + " MiB");
  std::ifstream in(file);
  if (!in) throw InputError(file, "", "cannot open file");
  std::stringstream buf;
  buf << in.rdbuf();
  return buf.str();
}

// Kahn's order over the edges given (ties in file order); incomplete when the edges close a cycle.
std::vector<std::size_t> kahn_order(std::size_t nodes, const std::vector<std::pair<std::size_t, std::size_t>>& edges) {
  std::vector<std::vector<std::size_t>> children(nodes);
  std::vector<std::size_t> waiting(nodes, 0);
  for (const auto& [from, to] : edges) {
    children[from].push_back(to);
    ++waiting[to];
  }
  std::priority_queue<std::size_t, std::vector<std::size_t>, std::greater<>> ready;
  for (std::size_t i = 0; i < nodes; ++i)
    if (waiting[i] == 0) ready.push(i);
  std::vector<std::size_t> order;
  while (!ready.empty()) {
    const std::size_t i = ready.top();
    ready.pop();
    order.push_back(i);
    for (std::size_t c : children[i])
      if (--waiting[c] == 0) ready.push(c);
  }
  return order;
}

// A topological order of the nodes (see chakra_json.hpp: data dependencies, and control
// dependencies where they resolve and close no cycle), counting what was dropped.
std::vector<std::size_t> topological_order(const ChakraGraph& g, ChakraImportReport* report = nullptr) {
  std::map<std::uint64_t, std::size_t> place;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    const auto [it, fresh] = place.emplace(g.nodes[i].id, i);
    if (!fresh)
      throw InputError(g.file, g.nodes[i].path + ".id",
                       "node id " + std::to_string(g.nodes[i].id) + " is also " + g.nodes[it->second].path + "'s");
  }
  std::vector<std::pair<std::size_t, std::size_t>> data, ctrl;
  std::size_t unresolved = 0;
  for (std::size_t i = 0; i < g.nodes.size(); ++i) {
    for (std::size_t d = 0; d < g.nodes[i].data_deps.size(); ++d) {
      const auto it = place.find(g.nodes[i].data_deps[d]);
      if (it == place.end())
        throw InputError(g.file, g.nodes[i].path + ".dataDeps[" + std::to_string(d) + "]",
                         "no node has id " + std::to_string(g.nodes[i].data_deps[d]));
      data.emplace_back(it->second, i);
    }
    for (const std::uint64_t dep : g.nodes[i].ctrl_deps) {
      const auto it = place.find(dep);
      if (it == place.end()) ++unresolved;
      else ctrl.emplace_back(it->second, i);
    }
  }
  std::vector<std::pair<std::size_t, std::size_t>> both = data;
  both.insert(both.end(), ctrl.begin(), ctrl.end());
  std::vector<std::size_t> order = kahn_order(g.nodes.size(), both);
  std::size_t cyclic = 0;
  if (order.size() != g.nodes.size()) {  // the control dependencies close a cycle: the data order alone
    cyclic = ctrl.size();
    order = kahn_order(g.nodes.size(), data);
    if (order.size() != g.nodes.size()) {
      std::vector<bool> placed(g.nodes.size(), false);
      for (std::size_t i : order) placed[i] = true;
      const std::size_t first = static_cast<std::size_t>(std::find(placed.begin(), placed.end(), false) - placed.begin());
      throw InputError(g.file, g.nodes[first].path, "the node is on a cycle of data dependencies, or waits for one");
    }
  }
  if (report) {
    report->ctrl_deps_unresolved = unresolved;
    report->ctrl_deps_cyclic = cyclic;
  }
  return order;
}

const ChakraAttr* find_attr(const std::vector<ChakraAttr>& attrs, const std::string& name) {
  for (const auto& a : attrs)
    if (a.name == name) return &a;
  return nullptr;
}

// A node's attribute, required, as the JSON value it holds; `file` names the file in errors.
const Json& required(const ChakraNode& n, const std::string& name, const std::string& file) {
  const ChakraAttr* a = n.attr(name);
  if (!a || a->field.empty()) throw InputError(file, n.path + ".attr", "missing attribute \"" + name + "\"");
  return a->value;
}

ChakraAttr make_attr(const std::string& name, const std::string& field, Json value) { return {name, field, std::move(value), ""}; }

// Numbers luwusim reads back exactly: doubles as doubles, counts as uint64.
Json u64(std::uint64_t v) { return Json(v); }

}  // namespace

const ChakraAttr* ChakraNode::attr(const std::string& n) const { return find_attr(attrs, n); }

namespace {

// Chakra's older JSON form, which its feeder reads (src/feeder/json_node.cpp): one object,
// {"workload_graph": [node, ...]}, each node {"Id", "Name", "NodeType" (a number), "is_cpu_op",
// "runtime" (its duration in microseconds), "data_deps"} and, on communication nodes,
// "tensor_size", "comm_type", "comm_priority", "comm_size", "comm_src", "comm_dst", "comm_tag"
// (older files: "involved_dim", "involved_dim_size").  No metadata, no control dependencies.
// The extra fields become the attributes the protobuf form names the same way.
ChakraGraph chakra_from_workload_graph(const JsonNode& root) {
  root.only_keys({"workload_graph"});
  ChakraGraph g;
  g.file = root.file();
  const JsonNode nodes = root.at("workload_graph");
  nodes.expect_array();
  static const std::vector<std::pair<std::string, std::string>> attr_fields = {
      {"tensor_size", "uint64_val"}, {"comm_type", "int64_val"}, {"comm_priority", "int32_val"},
      {"comm_size", "int64_val"},    {"comm_src", "int32_val"},  {"comm_dst", "int32_val"},
      {"comm_tag", "int32_val"},     {"involved_dim_size", "int32_val"}};
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const JsonNode n = nodes.at(i);
    std::vector<std::string> known = {"Id", "Name", "NodeType", "is_cpu_op", "runtime", "data_deps", "involved_dim"};
    for (const auto& [key, f] : attr_fields) known.push_back(key);
    n.only_keys(known);
    ChakraNode node;
    node.path = n.path();
    if (!n.has("Id")) n.fail("a node needs its \"Id\"");
    node.id = u64_of(n.at("Id"));
    node.name = n.get_string("Name", "");
    if (n.has("NodeType"))
      node.type = static_cast<ChakraNodeType>(
          n.at("NodeType").as_int(0, static_cast<std::int64_t>(node_type_names().size()) - 1));
    if (n.has("runtime")) node.duration_micros = u64_of(n.at("runtime"));
    node.data_deps = ids_of(n.has("data_deps") ? std::optional<JsonNode>(n.at("data_deps")) : std::nullopt);
    if (n.has("is_cpu_op")) node.attrs.push_back({"is_cpu_op", "bool_val", n.at("is_cpu_op").as_bool(), n.at("is_cpu_op").path()});
    for (const auto& [key, f] : attr_fields)
      if (n.has(key)) node.attrs.push_back({key, f, scalar_of(n.at(key), f), n.at(key).path()});
    if (n.has("involved_dim")) {
      ChakraAttr a{"involved_dim", "bool_list", Json::array(), n.at("involved_dim").path()};
      const JsonNode dims = n.at("involved_dim");
      for (std::size_t d = 0; d < dims.size(); ++d) a.value.push_back(dims.at(d).as_bool());
      node.attrs.push_back(std::move(a));
    }
    g.nodes.push_back(std::move(node));
  }
  return g;
}

}  // namespace

ChakraGraph chakra_from_json_objects(const std::vector<Json>& objects, const std::string& file) {
  ChakraGraph g;
  g.file = file;
  if (objects.empty()) throw InputError(file, "", "empty: a Chakra trace starts with its GlobalMetadata");
  if (objects.size() == 1 && objects[0].is_object() && objects[0].contains("workload_graph"))
    return chakra_from_workload_graph(JsonNode(objects[0], file, "$"));
  // PyTorch's own execution trace (torch.profiler.ExecutionTraceObserver, PARAM's et_replay
  // inputs) is what Chakra's converter starts from, not Chakra: host ops with no GPU kernel or time.
  if (objects.size() == 1 && objects[0].is_object() && objects[0].contains("nodes") && objects[0].contains("schema"))
    throw InputError(file, "$",
                     "a PyTorch execution trace (schema " +
                         (objects[0].at("schema").is_string() ? objects[0].at("schema").get<std::string>() : "?") +
                         "), not a Chakra trace: its host ops carry no GPU kernel or time. Link it with its Kineto "
                         "profile and convert it with Chakra's tools (chakra_trace_link, then chakra_converter), "
                         "and import the .et they write");
  const JsonNode meta(objects[0], file, "$[0]");
  meta.only_keys({"version", "attr"});
  g.version = meta.get_string("version", "");
  g.metadata = attrs_from_json(meta);
  for (std::size_t i = 1; i < objects.size(); ++i)
    g.nodes.push_back(node_from_json(JsonNode(objects[i], file, "$[" + std::to_string(i) + "]")));
  return g;
}

ChakraGraph load_chakra_json(const std::string& file) {
  const std::string text = read_text(file);
  require_json_bounds(text, file);  // either form: nesting and values bounded before any parse
  std::vector<Json> objects;
  std::istringstream in(text);
  in >> std::ws;
  if (in.peek() == '[') {  // one array of the objects
    Json all = parse_json_text(text, file);
    for (auto& o : all) objects.push_back(std::move(o));
  } else {  // the jsonizer's sequence of objects
    while (in.peek() != std::char_traits<char>::eof()) {
      Json j;
      try {
        in >> j;
      } catch (const Json::exception& e) {
        throw InputError(file, "$[" + std::to_string(objects.size()) + "]", std::string("not valid JSON: ") + e.what());
      }
      objects.push_back(std::move(j));
      in >> std::ws;
    }
  }
  return chakra_from_json_objects(objects, file);
}

std::string chakra_to_json_text(const ChakraGraph& g) {
  std::string out;
  Json meta{{"version", g.version}};
  Json attrs = Json::array();
  for (const auto& a : g.metadata) attrs.push_back(attr_to_json(a));
  if (!attrs.empty()) meta["attr"] = attrs;
  out += meta.dump() + "\n";
  for (const auto& n : g.nodes) {
    Json j{{"id", std::to_string(n.id)}, {"name", n.name}, {"type", node_type_names().at(static_cast<std::size_t>(n.type))}};
    if (!n.ctrl_deps.empty()) j["ctrlDeps"] = ids_to_json(n.ctrl_deps);
    if (!n.data_deps.empty()) j["dataDeps"] = ids_to_json(n.data_deps);
    if (n.start_time_micros) j["startTimeMicros"] = std::to_string(n.start_time_micros);
    if (n.duration_micros) j["durationMicros"] = std::to_string(n.duration_micros);
    if (!n.input_shapes.empty()) j["inputs"] = Json{{"shapes", n.input_shapes}};
    Json na = Json::array();
    for (const auto& a : n.attrs) na.push_back(attr_to_json(a));
    if (!na.empty()) j["attr"] = na;
    out += j.dump() + "\n";
  }
  return out;
}

void save_chakra_json(const ChakraGraph& graph, const std::string& file) {
  write_file_atomically(file, chakra_to_json_text(graph));
}

ChakraGraph trace_to_chakra(const Trace& trace) {
  // A stage trace's collectives and pipeline transfers have no Chakra mapping here yet.
  if (!trace.layout.whole_model_per_gpu())
    throw std::invalid_argument("export-chakra: a tensor-, pipeline- or expert-parallel stage trace is not exported yet "
                                "(layout " + std::to_string(trace.layout.tensor) + " x " +
                                std::to_string(trace.layout.pipeline) + " x " + std::to_string(trace.layout.data) +
                                (trace.layout.expert > 1 ? ", experts over " + std::to_string(trace.layout.expert) : "") +
                                ")");
  ChakraGraph g;
  g.version = kChakraVersion;
  Json layers = trace_to_json(trace).at("layers");
  g.metadata = {make_attr("schema", "string_val", kChakraSchema),
                make_attr("luwusim.format", "string_val", "luwusim-trace"),
                make_attr("luwusim.version", "int64_val", Trace::kVersion),
                make_attr("luwusim.model", "string_val", model_to_json(trace.model).dump()),
                make_attr("luwusim.training", "string_val", training_to_json(trace.training).dump()),
                make_attr("luwusim.layers", "string_val", layers.dump())};
  std::uint64_t next_id = 0;
  std::optional<std::uint64_t> previous;  // the last compute node: the stream's order
  for (std::size_t o = 0; o < trace.ops.size(); ++o) {
    const TraceOp& op = trace.ops[o];
    const std::string prefix = trace.layers.at(static_cast<std::size_t>(op.layer)).name + "." + to_string(op.kind) + ".";
    const std::vector<ChakraAttr> op_attrs = {
        make_attr("luwusim.op_kind", "string_val", to_string(op.kind)),
        make_attr("luwusim.layer", "int64_val", op.layer),
        make_attr("luwusim.micro_step", "int64_val", op.micro_step),
        make_attr("luwusim.op_flops", "double_val", op.flops),
        make_attr("luwusim.param_bytes", "uint64_val", u64(op.param_bytes)),
        make_attr("luwusim.grad_bytes", "uint64_val", u64(op.grad_bytes)),
        make_attr("luwusim.act_saved_bytes", "uint64_val", u64(op.act_saved_bytes)),
        make_attr("luwusim.act_freed_bytes", "uint64_val", u64(op.act_freed_bytes))};
    const auto& kernels = trace.kernels_of(op);
    auto add_node = [&](ChakraNode n) {
      n.id = next_id++;
      if (previous) n.data_deps.push_back(*previous);
      previous = n.id;
      g.nodes.push_back(std::move(n));
    };
    if (kernels.empty()) {  // an op that launches nothing still carries its bytes
      ChakraNode n;
      n.name = prefix + "op";
      n.type = ChakraNodeType::Comp;
      n.attrs = {make_attr("is_cpu_op", "bool_val", false), make_attr("num_ops", "int64_val", 0),
                 make_attr("luwusim.op", "uint64_val", u64(o))};
      n.attrs.insert(n.attrs.end(), op_attrs.begin(), op_attrs.end());
      add_node(std::move(n));
    }
    for (std::size_t p = 0; p < kernels.size(); ++p) {
      const Kernel& k = kernels[p];
      ChakraNode n;
      n.name = prefix + k.name;
      n.type = ChakraNodeType::Comp;
      n.attrs = {make_attr("is_cpu_op", "bool_val", false),
                 make_attr("num_ops", "int64_val", static_cast<std::int64_t>(std::llround(k.flops))),
                 make_attr("tensor_size", "uint64_val", u64(static_cast<std::uint64_t>(std::llround(k.bytes)))),
                 make_attr("luwusim.op", "uint64_val", u64(o)),
                 make_attr("luwusim.kernel", "string_val", k.name),
                 make_attr("luwusim.kernel_kind", "string_val", to_string(k.kind)),
                 make_attr("luwusim.flops", "double_val", k.flops),
                 make_attr("luwusim.bytes", "double_val", k.bytes),
                 make_attr("luwusim.output_elements", "double_val", k.output_elements)};
      if (k.kind == KernelKind::Gemm)
        n.attrs.push_back(make_attr("luwusim.gemm_mnk", "int64_list", Json::array({k.gemm.m, k.gemm.n, k.gemm.k})));
      if (k.kind == KernelKind::Gemm && k.gemm.batch != 1)
        n.attrs.push_back(make_attr("luwusim.gemm_batch", "int64_val", k.gemm.batch));
      if (k.params > 0) n.attrs.push_back(make_attr("luwusim.params", "uint64_val", u64(k.params)));
      if (k.parameterless_modules > 0)
        n.attrs.push_back(make_attr("luwusim.parameterless_modules", "int64_val", k.parameterless_modules));
      if (k.reduction_bytes > 0)
        n.attrs.push_back(make_attr("luwusim.reduction_bytes", "double_val", k.reduction_bytes));
      if (k.broadcast_bytes > 0)
        n.attrs.push_back(make_attr("luwusim.broadcast_bytes", "double_val", k.broadcast_bytes));
      if (k.measured_s > 0) {
        n.attrs.push_back(make_attr("luwusim.measured_s", "double_val", k.measured_s));
        n.duration_micros = static_cast<std::uint64_t>(std::llround(k.measured_s * 1e6));
      }
      if (p == 0) n.attrs.insert(n.attrs.end(), op_attrs.begin(), op_attrs.end());
      add_node(std::move(n));
    }
    if (op.grad_bytes > 0) {  // the all-reduce DDP would issue: a hint, not part of the compute order
      ChakraNode n;
      n.id = next_id++;
      n.name = prefix + "gradient-all-reduce";
      n.type = ChakraNodeType::CommColl;
      n.data_deps.push_back(*previous);
      n.attrs = {make_attr("is_cpu_op", "bool_val", false), make_attr("comm_type", "int64_val", kAllReduce),
                 make_attr("comm_size", "int64_val", static_cast<std::int64_t>(op.grad_bytes)),
                 make_attr("luwusim.role", "string_val", "data-parallel gradient all-reduce (hint)")};
      g.nodes.push_back(std::move(n));
    }
  }
  return g;
}

namespace {

// The JSON text an attribute of the metadata holds, parsed.
Json metadata_json(const ChakraGraph& g, const std::string& name) {
  const ChakraAttr* a = find_attr(g.metadata, name);
  if (!a || a->field != "string_val") throw InputError(g.file, "$[0].attr", "missing string attribute \"" + name + "\"");
  const std::string& text = a->value.get<std::string>();
  try {
    require_json_bounds(text, g.file);
    return Json::parse(text);
  } catch (const std::exception& e) {  // too deep, or not JSON
    throw InputError(g.file, a->path + ".stringVal", std::string("not valid JSON: ") + e.what());
  }
}

// A graph luwusim wrote: the trace file's document, rebuilt from the attributes, read as one.
Trace rebuild_trace(const ChakraGraph& g, const std::vector<std::size_t>& order, ChakraImportReport& report) {
  Json doc{{"format", "luwusim-trace"},
           {"version", Trace::kVersion},
           {"model", metadata_json(g, "luwusim.model")},
           {"training", metadata_json(g, "luwusim.training")},
           {"layers", metadata_json(g, "luwusim.layers")}};
  std::vector<Json> ops;             // by op index
  std::vector<Json> op_kernels;      // each op's kernels, in order
  static const std::vector<std::pair<std::string, std::string>> op_fields = {
      {"kind", "luwusim.op_kind"},       {"layer", "luwusim.layer"},           {"micro_step", "luwusim.micro_step"},
      {"flops", "luwusim.op_flops"},     {"param_bytes", "luwusim.param_bytes"}, {"grad_bytes", "luwusim.grad_bytes"},
      {"act_saved_bytes", "luwusim.act_saved_bytes"}, {"act_freed_bytes", "luwusim.act_freed_bytes"}};
  for (std::size_t i : order) {
    const ChakraNode& n = g.nodes[i];
    if (n.type == ChakraNodeType::CommColl) {
      ++report.collectives_dropped;
      if (const auto* size = n.attr("comm_size"); size && size->value.is_number_integer() && size->value.get<std::int64_t>() > 0)
        report.collective_bytes_dropped += size->value.get<std::uint64_t>();
      continue;
    }
    if (n.type != ChakraNodeType::Comp || !n.attr("luwusim.op")) {
      ++report.other_nodes_dropped;
      continue;
    }
    const Json& op_index = required(n, "luwusim.op", g.file);
    // Every op has a node, so its index is below the node count.
    if (!op_index.is_number_unsigned() || op_index.get<std::uint64_t>() >= g.nodes.size())
      throw InputError(g.file, n.attr("luwusim.op")->path, "expected an op index below the node count " + std::to_string(g.nodes.size()));
    const auto o = static_cast<std::size_t>(op_index.get<std::uint64_t>());
    if (o >= ops.size()) {
      ops.resize(o + 1);
      op_kernels.resize(o + 1, Json::array());
    }
    if (n.attr("luwusim.op_kind")) {
      if (!ops[o].is_null()) throw InputError(g.file, n.path, "a second node opens op " + std::to_string(o));
      Json op = Json::object();
      for (const auto& [key, attr] : op_fields) op[key] = required(n, attr, g.file);
      ops[o] = std::move(op);
    }
    if (n.attr("luwusim.kernel")) {
      ++report.compute_nodes;
      Json k{{"name", required(n, "luwusim.kernel", g.file)},
             {"kind", required(n, "luwusim.kernel_kind", g.file)},
             {"flops", required(n, "luwusim.flops", g.file)},
             {"bytes", required(n, "luwusim.bytes", g.file)},
             {"output_elements", required(n, "luwusim.output_elements", g.file)}};
      if (const auto* mnk = n.attr("luwusim.gemm_mnk")) {
        if (!mnk->value.is_array() || mnk->value.size() != 3)
          throw InputError(g.file, mnk->path, "expected an int64_list of m, n and k");
        k["gemm"] = Json{{"m", mnk->value[0]}, {"n", mnk->value[1]}, {"k", mnk->value[2]}};
        if (const auto* batch = n.attr("luwusim.gemm_batch")) k["gemm"]["batch"] = batch->value;
      }
      if (const auto* p = n.attr("luwusim.params")) k["params"] = p->value;
      if (const auto* h = n.attr("luwusim.parameterless_modules")) k["parameterless_modules"] = h->value;
      if (const auto* m = n.attr("luwusim.measured_s")) k["measured_s"] = m->value;
      if (const auto* r = n.attr("luwusim.reduction_bytes")) k["reduction_bytes"] = r->value;
      if (const auto* r = n.attr("luwusim.broadcast_bytes")) k["broadcast_bytes"] = r->value;
      op_kernels[o].push_back(std::move(k));
    }
  }
  // Identical kernel lists are stored once, as a trace keeps them.
  std::map<std::string, std::size_t> list_index;
  Json lists = Json::array(), ops_json = Json::array();
  for (std::size_t o = 0; o < ops.size(); ++o) {
    if (ops[o].is_null()) throw InputError(g.file, "$", "op " + std::to_string(o) + " has no node with its \"luwusim.op_kind\"");
    const std::string key = op_kernels[o].dump();
    auto [it, fresh] = list_index.emplace(key, lists.size());
    if (fresh) lists.push_back(op_kernels[o]);
    ops[o]["kernels"] = it->second;
    ops_json.push_back(std::move(ops[o]));
  }
  doc["kernel_lists"] = std::move(lists);
  doc["ops"] = std::move(ops_json);
  return trace_from_json(JsonNode(doc, g.file + " (its luwusim.* attributes as a luwusim trace)"));
}

// The multiply of a host node from its inputs.shapes (Chakra's converter writes Python's str() of the
// operands' shapes, "[[2048, 768], [768, 3072]]", which JSON reads); none when the node is no
// multiply or its shapes say nothing readable (they are evidence, not required).
std::optional<ProfiledGemm> gemm_of_shapes(const ChakraNode& n) {
  if (n.input_shapes.empty() || n.input_shapes.size() > 4096) return std::nullopt;
  int depth = 0;
  for (char c : n.input_shapes) {
    depth += c == '[' ? 1 : c == ']' ? -1 : 0;
    if (depth > 3) return std::nullopt;
  }
  const Json shapes = Json::parse(n.input_shapes, nullptr, false);
  if (shapes.is_discarded()) return std::nullopt;
  // The converter numbers the parts of one host op: "aten::mm(0)", "aten::mm(1)".
  std::string op = n.name;
  if (const auto open = op.rfind('('); open != std::string::npos && op.ends_with(")") && open + 2 < op.size() &&
      std::all_of(op.begin() + static_cast<std::ptrdiff_t>(open) + 1, op.end() - 1, [](char c) { return std::isdigit(static_cast<unsigned char>(c)); }))
    op.erase(open);
  return profiled_gemm(op, JsonNode(shapes, "", n.path + ".inputs.shapes"), n.path + ".inputs.shapes");
}

bool is_cpu_op(const ChakraNode& n, const std::string& file) {
  const ChakraAttr* a = n.attr("is_cpu_op");
  if (!a || a->field.empty()) return true;  // as Chakra's feeder reads a node without it
  if (!a->value.is_boolean()) throw InputError(file, a->path, "expected a bool_val");
  return a->value.get<bool>();
}

}  // namespace

ChakraImport chakra_to_trace(const ChakraGraph& g, const std::optional<std::pair<ModelConfig, TrainingConfig>>& workload) {
  ChakraImport result;
  const std::vector<std::size_t> order = topological_order(g, &result.report);
  result.report.written_by_luwusim = find_attr(g.metadata, "luwusim.model") != nullptr;
  auto grad_bytes = [](const Trace& t) {
    std::uint64_t sum = 0;
    for (const auto& op : t.ops) sum += op.grad_bytes;
    return sum;
  };
  if (result.report.written_by_luwusim) {
    result.trace = rebuild_trace(g, order, result.report);
    result.report.trace_grad_bytes = grad_bytes(result.trace);
    return result;
  }
  if (!workload)
    throw InputError(g.file, "$[0]",
                     "not written by luwusim (no \"luwusim.model\" attribute): name the model and training settings "
                     "whose kernels its compute nodes time (--model, --micro-batch, --seq, ...)");
  try {
    result.trace = generate_trace(workload->first, workload->second);
  } catch (const std::invalid_argument& e) {
    throw InputError(g.file, "", std::string("the model and training settings given: ") + e.what());
  }
  KernelProfile profile;
  profile.file = g.file;
  for (std::size_t place = 0; place < order.size(); ++place) {
    const ChakraNode& n = g.nodes[order[place]];
    if (n.type == ChakraNodeType::CommColl) {
      ++result.report.collectives_dropped;
      if (const auto* size = n.attr("comm_size"); size && size->value.is_number_integer() && size->value.get<std::int64_t>() > 0)
        result.report.collective_bytes_dropped += size->value.get<std::uint64_t>();
      continue;
    }
    if (n.type != ChakraNodeType::Comp) {
      ++result.report.other_nodes_dropped;
      continue;
    }
    if (is_cpu_op(n, g.file)) {
      ++result.report.cpu_nodes;
      // A host matrix multiply that gives its operands' shapes: checked against the model's GEMMs
      // as a Kineto profile's are (check_gemm_shapes).
      if (auto gemm = gemm_of_shapes(n)) profile.gemm_ops.push_back(std::move(*gemm));
      continue;
    }
    if (n.duration_micros == 0) {
      ++result.report.unmeasured_compute_nodes;
      continue;
    }
    // Refused here, where the duration becomes a kernel time, not later by `run` on the trace it writes.
    if (static_cast<double>(n.duration_micros) * 1e-6 > kMaxMeasuredKernelSeconds)
      throw InputError(g.file, n.path + ".duration_micros",
                       "a GPU kernel of " + std::to_string(n.duration_micros) + " us, more than an hour, is not a measurement");
    ++result.report.compute_nodes;
    profile.kernels.push_back({n.name, classify_kernel_name(n.name), static_cast<double>(place),
                               static_cast<double>(n.duration_micros) * 1e-6});
  }
  if (result.report.compute_nodes + result.report.unmeasured_compute_nodes == 0)
    throw InputError(g.file, "",
                     std::string("no GPU compute node: ") +
                         (result.report.cpu_nodes > 0 || result.report.collectives_dropped == 0 ? "a host-only graph ("
                                                                                                : "a communication-only graph (") +
                         std::to_string(result.report.cpu_nodes) + " CPU nodes, " +
                         std::to_string(result.report.collectives_dropped) + " collectives, " +
                         std::to_string(result.report.other_nodes_dropped) +
                         " other nodes) times no kernel; give the GPU side's trace (Chakra's converter with the Kineto "
                         "trace merged in)");
  result.report.kernel_times = apply_kernel_times(result.trace, profile);
  result.report.trace_grad_bytes = grad_bytes(result.trace);
  return result;
}

Json chakra_import_report_to_json(const ChakraImportReport& r) {
  Json j{{"written_by_luwusim", r.written_by_luwusim},
         {"gpu_compute_nodes_used", r.compute_nodes},
         {"cpu_nodes_dropped", r.cpu_nodes},
         {"collectives_dropped", r.collectives_dropped},
         {"collective_bytes_dropped", r.collective_bytes_dropped},
         {"trace_grad_bytes", r.trace_grad_bytes},
         {"other_nodes_dropped", r.other_nodes_dropped},
         {"gpu_compute_nodes_without_duration", r.unmeasured_compute_nodes},
         {"ctrl_deps_dropped_unresolved", r.ctrl_deps_unresolved},
         {"ctrl_deps_dropped_cyclic", r.ctrl_deps_cyclic}};
  if (r.kernel_times) j["kernel_times"] = kernel_times_to_json(*r.kernel_times);
  return j;
}

}  // namespace luwu::workloads
