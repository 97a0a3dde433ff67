#pragma once
// Chakra execution traces in their binary form (.et): what Chakra's converter writes and ASTRA-sim
// reads.  The file is a GlobalMetadata message, then one Node message per node, each preceded by
// its length as a varint (Chakra's protolib), gzipped or not; the messages are those of
// workloads/chakra_et.proto.  They are read into, and written from, the same ChakraGraph as the
// JSON form (chakra_json.hpp), so one import serves both, and errors name the file and the place
// as there: "$[0]" the metadata, "$[5].attr[2]" an attribute of the fifth node.
// AttributeProto values keep their field ("int64_val", "string_list", ...); bytes become base64
// text, as in protobuf's JSON mapping; a double that is not finite is refused (JSON has none).
#include <string>

#include "workloads/chakra_json.hpp"

namespace luwu::workloads {

ChakraGraph load_chakra_et(const std::string& file);
// Uncompressed, whole or not at all.  std::invalid_argument for a value its field cannot hold.
void save_chakra_et(const ChakraGraph& graph, const std::string& file);

// By the file's name: ".et" or ".et.gz" is the binary form (written: ".et" only), anything else a
// JSON form.
bool is_chakra_et_name(const std::string& file);
ChakraGraph load_chakra(const std::string& file);
void save_chakra(const ChakraGraph& graph, const std::string& file);

}  // namespace luwu::workloads
