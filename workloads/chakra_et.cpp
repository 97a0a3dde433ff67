// Chakra's binary form (.et) to and from ChakraGraph, through the generated messages of
// chakra_et.proto and protobuf's reflection (one rule for the 30 kinds of attribute value).
#include "workloads/chakra_et.hpp"

#include <cmath>
#include <cstdint>
#include <fstream>
#include <iterator>

#include <fmt/format.h>
#include <google/protobuf/io/gzip_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include "common/atomic_write.hpp"
#include "common/input_error.hpp"
#include "common/json_input.hpp"
#include "chakra_et.pb.h"  // generated from workloads/chakra_et.proto

namespace luwu::workloads {

namespace {

namespace pb = google::protobuf;
constexpr int kLargestNodeType = static_cast<int>(ChakraNodeType::Checkpoint);

std::string read_bytes(const std::string& file) {
  require_input_file(file, "Chakra .et file");
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(file, "", "cannot open file");
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// A gzipped file's content, bounded as a file is (a small file may unpack to gigabytes).
std::string gunzip(const std::string& packed, const std::string& file) {
  pb::io::ArrayInputStream raw(packed.data(), static_cast<int>(packed.size()));
  pb::io::GzipInputStream gz(&raw, pb::io::GzipInputStream::GZIP);
  std::string out;
  const void* chunk = nullptr;
  int size = 0;
  while (gz.Next(&chunk, &size)) {
    out.append(static_cast<const char*>(chunk), static_cast<std::size_t>(size));
    if (out.size() > kMaxInputFileBytes)
      throw InputError(file, "", "unpacks to over " + std::to_string(kMaxInputFileBytes >> 20) + " MiB");
  }
  if (gz.ZlibErrorMessage() != nullptr)
    throw InputError(file, "", std::string("is not a valid gzip file: ") + gz.ZlibErrorMessage());
  return out;
}

std::string utf8(const std::string& s, const std::string& file, const std::string& path) {
  try {
    (void)Json(s).dump();
  } catch (const Json::exception&) {
    throw InputError(file, path, "is not valid UTF-8 text");
  }
  return s;
}

std::string base64(const std::string& in) {
  static const char* digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  for (std::size_t i = 0; i < in.size(); i += 3) {
    std::uint32_t v = static_cast<std::uint8_t>(in[i]) << 16;
    if (i + 1 < in.size()) v |= static_cast<std::uint8_t>(in[i + 1]) << 8;
    if (i + 2 < in.size()) v |= static_cast<std::uint8_t>(in[i + 2]);
    out += digits[(v >> 18) & 63];
    out += digits[(v >> 12) & 63];
    out += i + 1 < in.size() ? digits[(v >> 6) & 63] : '=';
    out += i + 2 < in.size() ? digits[v & 63] : '=';
  }
  return out;
}

// One value of `f` (singular: index < 0) of `m`, as the JSON form holds it.
Json value_of(const pb::Message& m, const pb::FieldDescriptor* f, int index, bool raw_bytes, const std::string& file,
              const std::string& path) {
  const pb::Reflection* r = m.GetReflection();
  const bool one = index < 0;
  auto finite = [&](double v) {
    if (!std::isfinite(v)) throw InputError(file, path, "is not a finite number");
    return Json(v);
  };
  switch (f->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_DOUBLE: return finite(one ? r->GetDouble(m, f) : r->GetRepeatedDouble(m, f, index));
    case pb::FieldDescriptor::CPPTYPE_FLOAT: return finite(one ? r->GetFloat(m, f) : r->GetRepeatedFloat(m, f, index));
    case pb::FieldDescriptor::CPPTYPE_INT32: return Json(static_cast<std::int64_t>(one ? r->GetInt32(m, f) : r->GetRepeatedInt32(m, f, index)));
    case pb::FieldDescriptor::CPPTYPE_INT64: return Json(static_cast<std::int64_t>(one ? r->GetInt64(m, f) : r->GetRepeatedInt64(m, f, index)));
    case pb::FieldDescriptor::CPPTYPE_UINT32: return Json(static_cast<std::uint64_t>(one ? r->GetUInt32(m, f) : r->GetRepeatedUInt32(m, f, index)));
    case pb::FieldDescriptor::CPPTYPE_UINT64: return Json(static_cast<std::uint64_t>(one ? r->GetUInt64(m, f) : r->GetRepeatedUInt64(m, f, index)));
    case pb::FieldDescriptor::CPPTYPE_BOOL: return Json(one ? r->GetBool(m, f) : r->GetRepeatedBool(m, f, index));
    case pb::FieldDescriptor::CPPTYPE_STRING: {
      const std::string s = one ? r->GetString(m, f) : r->GetRepeatedString(m, f, index);
      return raw_bytes ? Json(base64(s)) : Json(utf8(s, file, path));
    }
    default: throw InputError(file, path, "holds a value of a kind luwusim does not read");
  }
}

ChakraAttr attr_of(const chakra_et::AttributeProto& a, const std::string& file, const std::string& path) {
  ChakraAttr out;
  out.path = path;
  out.name = utf8(a.name(), file, path + ".name");
  const pb::FieldDescriptor* f =
      a.GetReflection()->GetOneofFieldDescriptor(a, chakra_et::AttributeProto::descriptor()->FindOneofByName("value"));
  if (f == nullptr) return out;  // no value set
  out.field = f->name();
  const bool raw_bytes = out.field.starts_with("bytes");
  const std::string at = path + "." + out.field;
  if (f->cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE) {
    out.value = value_of(a, f, -1, raw_bytes, file, at);
    return out;
  }
  const pb::Message& list = a.GetReflection()->GetMessage(a, f);
  const pb::FieldDescriptor* values = list.GetDescriptor()->FindFieldByName("values");
  out.value = Json::array();
  const int n = list.GetReflection()->FieldSize(list, values);
  for (int i = 0; i < n; ++i)
    out.value.push_back(value_of(list, values, i, raw_bytes, file, at + ".values[" + std::to_string(i) + "]"));
  return out;
}

ChakraNode node_of(const chakra_et::Node& n, const std::string& file, const std::string& path) {
  ChakraNode out;
  out.path = path;
  out.id = n.id();
  out.name = utf8(n.name(), file, path + ".name");
  if (n.type() < 0 || n.type() > kLargestNodeType)
    throw InputError(file, path + ".type", fmt::format("expected a node type from 0 to {}, found {}", kLargestNodeType, n.type()));
  out.type = static_cast<ChakraNodeType>(n.type());
  out.ctrl_deps.assign(n.ctrl_deps().begin(), n.ctrl_deps().end());
  out.data_deps.assign(n.data_deps().begin(), n.data_deps().end());
  out.start_time_micros = n.start_time_micros();
  out.duration_micros = n.duration_micros();
  out.input_shapes = utf8(n.inputs().shapes(), file, path + ".inputs.shapes");
  for (int i = 0; i < n.attr_size(); ++i) out.attrs.push_back(attr_of(n.attr(i), file, path + ".attr[" + std::to_string(i) + "]"));
  return out;
}

// One value into `f` of `m` (added when repeated).
void put(pb::Message* m, const pb::FieldDescriptor* f, const Json& v, const std::string& what) {
  const pb::Reflection* r = m->GetReflection();
  const bool many = f->is_repeated();
  auto expect = [&](bool ok) {
    if (!ok) throw std::invalid_argument(what + ": " + v.dump() + " does not fit " + f->full_name());
  };
  auto integer = [&](long double lo, long double hi) {  // long double holds every 64-bit integer exactly
    expect(v.is_number_integer());
    const long double x = v.is_number_unsigned() ? static_cast<long double>(v.get<std::uint64_t>())
                                                 : static_cast<long double>(v.get<std::int64_t>());
    expect(x >= lo && x <= hi);
  };
  switch (f->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_DOUBLE:
      expect(v.is_number());
      many ? r->AddDouble(m, f, v.get<double>()) : r->SetDouble(m, f, v.get<double>());
      break;
    case pb::FieldDescriptor::CPPTYPE_FLOAT:
      expect(v.is_number());
      many ? r->AddFloat(m, f, v.get<float>()) : r->SetFloat(m, f, v.get<float>());
      break;
    case pb::FieldDescriptor::CPPTYPE_INT32:
      integer(INT32_MIN, INT32_MAX);
      many ? r->AddInt32(m, f, v.get<std::int32_t>()) : r->SetInt32(m, f, v.get<std::int32_t>());
      break;
    case pb::FieldDescriptor::CPPTYPE_INT64:
      integer(INT64_MIN, INT64_MAX);
      many ? r->AddInt64(m, f, v.get<std::int64_t>()) : r->SetInt64(m, f, v.get<std::int64_t>());
      break;
    case pb::FieldDescriptor::CPPTYPE_UINT32:
      integer(0, UINT32_MAX);
      many ? r->AddUInt32(m, f, v.get<std::uint32_t>()) : r->SetUInt32(m, f, v.get<std::uint32_t>());
      break;
    case pb::FieldDescriptor::CPPTYPE_UINT64:
      integer(0, UINT64_MAX);
      many ? r->AddUInt64(m, f, v.get<std::uint64_t>()) : r->SetUInt64(m, f, v.get<std::uint64_t>());
      break;
    case pb::FieldDescriptor::CPPTYPE_BOOL:
      expect(v.is_boolean());
      many ? r->AddBool(m, f, v.get<bool>()) : r->SetBool(m, f, v.get<bool>());
      break;
    case pb::FieldDescriptor::CPPTYPE_STRING:
      // bytes_val / bytes_list hold base64 text in a ChakraGraph; luwusim writes none.
      expect(v.is_string() && f->containing_type()->name() != "BytesList" && f->name() != "bytes_val");
      many ? r->AddString(m, f, v.get<std::string>()) : r->SetString(m, f, v.get<std::string>());
      break;
    default: expect(false);
  }
}

void fill_attr(chakra_et::AttributeProto* out, const ChakraAttr& a) {
  out->set_name(a.name);
  if (a.field.empty()) return;
  const pb::FieldDescriptor* f = chakra_et::AttributeProto::descriptor()->FindFieldByName(a.field);
  if (f == nullptr) throw std::invalid_argument("attribute " + a.name + ": no AttributeProto field " + a.field);
  const std::string what = "attribute " + a.name;
  if (f->cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE) return put(out, f, a.value, what);
  pb::Message* list = out->GetReflection()->MutableMessage(out, f);
  const pb::FieldDescriptor* values = list->GetDescriptor()->FindFieldByName("values");
  if (!a.value.is_array()) throw std::invalid_argument(what + ": a list field holds an array");
  for (const auto& v : a.value) put(list, values, v, what);
}

void append_delimited(std::string& out, const pb::Message& m) {
  const std::string body = m.SerializeAsString();
  std::uint64_t n = body.size();
  do {
    out += static_cast<char>((n & 0x7f) | (n > 0x7f ? 0x80 : 0));
    n >>= 7;
  } while (n > 0);
  out += body;
}

}  // namespace

ChakraGraph load_chakra_et(const std::string& file) {
  std::string bytes = read_bytes(file);
  if (bytes.size() >= 2 && static_cast<std::uint8_t>(bytes[0]) == 0x1f && static_cast<std::uint8_t>(bytes[1]) == 0x8b)
    bytes = gunzip(bytes, file);
  ChakraGraph g;
  g.file = file;
  std::size_t at = 0;
  for (std::size_t index = 0; at < bytes.size(); ++index) {
    const std::string path = "$[" + std::to_string(index) + "]";
    std::uint64_t size = 0;
    for (int shift = 0;; shift += 7) {
      if (at >= bytes.size() || shift > 28)
        throw InputError(file, path, fmt::format("a message's length at byte {} is not a valid varint32", at));
      const auto b = static_cast<std::uint8_t>(bytes[at++]);
      size |= static_cast<std::uint64_t>(b & 0x7f) << shift;
      if (!(b & 0x80)) break;
    }
    if (size > bytes.size() - at)
      throw InputError(file, path, fmt::format("the message is cut off: {} bytes announced, {} left", size, bytes.size() - at));
    const char* body = bytes.data() + at;
    at += size;
    if (index == 0) {
      chakra_et::GlobalMetadata meta;
      if (!meta.ParseFromArray(body, static_cast<int>(size)))
        throw InputError(file, path, "is not a Chakra GlobalMetadata message (protobuf)");
      g.version = utf8(meta.version(), file, path + ".version");
      for (int i = 0; i < meta.attr_size(); ++i)
        g.metadata.push_back(attr_of(meta.attr(i), file, path + ".attr[" + std::to_string(i) + "]"));
      continue;
    }
    chakra_et::Node node;
    if (!node.ParseFromArray(body, static_cast<int>(size)))
      throw InputError(file, path, "is not a Chakra Node message (protobuf)");
    g.nodes.push_back(node_of(node, file, path));
  }
  if (bytes.empty()) throw InputError(file, "", "empty: a Chakra trace starts with its GlobalMetadata");
  return g;
}

void save_chakra_et(const ChakraGraph& graph, const std::string& file) {
  std::string out;
  chakra_et::GlobalMetadata meta;
  meta.set_version(graph.version);
  for (const auto& a : graph.metadata) fill_attr(meta.add_attr(), a);
  append_delimited(out, meta);
  for (const auto& n : graph.nodes) {
    chakra_et::Node node;
    node.set_id(n.id);
    node.set_name(n.name);
    node.set_type(static_cast<int>(n.type));
    for (auto d : n.ctrl_deps) node.add_ctrl_deps(d);
    for (auto d : n.data_deps) node.add_data_deps(d);
    node.set_start_time_micros(n.start_time_micros);
    node.set_duration_micros(n.duration_micros);
    if (!n.input_shapes.empty()) node.mutable_inputs()->set_shapes(n.input_shapes);
    for (const auto& a : n.attrs) fill_attr(node.add_attr(), a);
    append_delimited(out, node);
  }
  write_file_atomically(file, out);
}

bool is_chakra_et_name(const std::string& file) {
  return file.ends_with(".et") || file.ends_with(".et.gz");
}

ChakraGraph load_chakra(const std::string& file) {
  return is_chakra_et_name(file) ? load_chakra_et(file) : load_chakra_json(file);
}

void save_chakra(const ChakraGraph& graph, const std::string& file) {
  if (file.ends_with(".gz"))
    throw InputError(file, "", "luwusim writes Chakra files uncompressed: name it .et (protobuf) or .json (gzip it after, if you like)");
  is_chakra_et_name(file) ? save_chakra_et(graph, file) : save_chakra_json(graph, file);
}

}  // namespace luwu::workloads
