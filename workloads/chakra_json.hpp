#pragma once
// Chakra execution traces (MLCommons; what ASTRA-sim replays), JSON form, in and out.
//
// The JSON form is what Chakra's jsonizer writes (src/jsonizer/jsonizer.py): the GlobalMetadata
// message, then every Node message, each as protobuf's JSON mapping of schema/protobuf/et_def.proto,
// one object after the other in one file.  Read: field names in lowerCamelCase ("dataDeps",
// "durationMicros", "int64Val", as MessageToJson writes them) or as in the .proto ("data_deps"),
// 64-bit integers as numbers or strings, enums by name or number; a JSON array of those objects is
// read as the same sequence.  JSON paths name the object by its place: "$[0]" is the metadata,
// "$[5].attr[2].int64Val" an attribute of the fifth node.  Written: one object per line,
// lowerCamelCase, 64-bit integers as strings (what google.protobuf.json_format.Parse reads back
// into et_def's messages).  The binary form (.et) is read and written by chakra_et.hpp into the
// same ChakraGraph.  The feeder's older form, one object {"workload_graph": [...]}, is read too.
//
// Export (trace_to_chakra): one COMP_NODE per kernel launch, in program order, each depending on
// the one before (one compute stream); attributes "num_ops" (FLOPs, int64), "tensor_size" (bytes
// moved, uint64), "is_cpu_op" false, and duration_micros for a kernel with a measured time.  After
// each backward op that hands over a gradient, a COMM_COLL_NODE ALL_REDUCE of its bytes
// ("comm_type", "comm_size"), depending on that op's last kernel and on nothing after it: the
// data-parallel reduction DDP issues, a hint for a simulator that runs the graph alone.  Every
// luwusim field rides along in "luwusim.*" attributes (the metadata holds the model, training
// settings and layers as JSON text), so that import restores the trace exactly.
//
// Import (chakra_to_trace): the graph is put in a topological order (ties in file order), by its
// data dependencies as Chakra's feeder schedules, and by its control dependencies where they can
// be honoured: ids must be unique and data dependencies must name nodes of the file without a
// cycle; a control dependency on a node the file lacks is dropped (Chakra's converter points
// them at a root it does not write), and when the control dependencies close a cycle with the
// data dependencies, all of them are dropped and the order is the data dependencies' alone.  The
// report counts both.
// - A graph luwusim wrote (metadata "luwusim.model"): the trace is rebuilt from the attributes,
//   checked as a trace file is (trace_from_json); the COMM_COLL_NODEs are dropped: the training
//   system under simulation issues its own collectives.
// - Any other graph (from PyTorch via Chakra's converter, say) has no layer structure luwusim could
//   read: the caller names the model and training settings, whose generated trace gives the layers,
//   parameters, gradients and activations; the graph's GPU compute nodes (COMP_NODE with
//   "is_cpu_op" false, which Chakra's feeder reads as true when absent) with a duration_micros are
//   the measured kernels, named and matched to the trace's kernels by the rule of kernel_times.hpp.
//   CPU nodes, collectives (the system issues its own; their count and bytes are reported),
//   send/receive, memory and metadata nodes are dropped.  A graph with no GPU compute node (a
//   host-only trace) times nothing and is refused.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/json_input.hpp"
#include "workloads/kernel_times.hpp"
#include "workloads/trace.hpp"

namespace luwu::workloads {

enum class ChakraNodeType {
  Invalid, Metadata, MemLoad, MemStore, Comp, CommSend, CommRecv, CommColl, Storage, Batch, Checkpoint
};

struct ChakraAttr {
  std::string name;
  std::string field;  // the value's field in AttributeProto's oneof, snake_case: "int64_val", "string_list", ...
  luwu::Json value;   // a number, string or bool; an array for the *_list fields
  std::string path;   // where it was read, for messages
};

struct ChakraNode {
  std::uint64_t id = 0;
  std::string name;
  ChakraNodeType type = ChakraNodeType::Invalid;
  std::vector<std::uint64_t> ctrl_deps;
  std::vector<std::uint64_t> data_deps;
  std::uint64_t start_time_micros = 0;
  std::uint64_t duration_micros = 0;
  std::vector<ChakraAttr> attrs;
  std::string input_shapes;  // inputs.shapes, as Chakra's converter writes them ("[[2048, 768], ...]"); "" if none
  std::string path;  // where it was read ("$[3]"), for messages

  const ChakraAttr* attr(const std::string& name) const;
};

struct ChakraGraph {
  std::string file;
  std::string version;  // GlobalMetadata.version
  std::vector<ChakraAttr> metadata;
  std::vector<ChakraNode> nodes;  // as in the file
};

ChakraGraph load_chakra_json(const std::string& file);
// The objects of an already parsed file: the metadata first, then the nodes.
ChakraGraph chakra_from_json_objects(const std::vector<luwu::Json>& objects, const std::string& file);
std::string chakra_to_json_text(const ChakraGraph& graph);
void save_chakra_json(const ChakraGraph& graph, const std::string& file);  // whole or not at all

// std::invalid_argument for a tensor- or pipeline-parallel stage trace (workloads/stage_trace.hpp).
ChakraGraph trace_to_chakra(const Trace& trace);

struct ChakraImportReport {
  bool written_by_luwusim = false;
  std::size_t compute_nodes = 0;             // GPU compute nodes used (kernels)
  std::size_t cpu_nodes = 0;                 // COMP_NODEs on the CPU, dropped
  std::size_t collectives_dropped = 0;       // COMM_COLL_NODEs
  std::uint64_t collective_bytes_dropped = 0;
  std::uint64_t trace_grad_bytes = 0;        // the imported trace's gradient bytes per iteration, to hold
                                             // against a data-parallel graph's all-reduce bytes
  std::size_t other_nodes_dropped = 0;       // send/recv, memory, metadata, ...
  std::size_t unmeasured_compute_nodes = 0;  // a foreign graph's GPU compute nodes without a duration
  std::size_t ctrl_deps_unresolved = 0;      // control dependencies on nodes not in the file, dropped
  std::size_t ctrl_deps_cyclic = 0;          // control dependencies dropped as they closed a cycle
  std::optional<KernelTimesReport> kernel_times;  // a foreign graph's compute nodes as measured kernels
};

struct ChakraImport {
  Trace trace;
  ChakraImportReport report;
};

// `workload`: the model and training settings a foreign graph is of (see above); unused, and may
// be absent, for a graph luwusim wrote.  InputError with the file and the JSON path.
ChakraImport chakra_to_trace(const ChakraGraph& graph,
                             const std::optional<std::pair<ModelConfig, TrainingConfig>>& workload);

luwu::Json chakra_import_report_to_json(const ChakraImportReport& report);

}  // namespace luwu::workloads
