#pragma once
// Helpers shared by the topology tests.
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <unistd.h>

#include "common/json_input.hpp"
#include "models/profile.hpp"
#include "topologies/routes.hpp"
#include "topologies/topology.hpp"

namespace topo_test {

using namespace luwu::topologies;

inline std::string temp_path(const std::string& stem) {
  return "topo-test-" + std::to_string(::getpid()) + "-" + stem;
}

inline void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
}

// A file that is removed when it goes out of scope.
struct TempFile {
  std::string path;
  explicit TempFile(std::string p) : path(std::move(p)) {}
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() { std::remove(path.c_str()); }
};

// A copy of the shipped tofino profile with a different port count, so small fat-trees of
// low-radix switches can be built and counted by hand.  Keep the returned file while it is used.
inline std::unique_ptr<TempFile> small_switch_profile(int ports) {
  luwu::Json j = luwu::load_json_file(luwu::models::profiles_dir() + "/tofino.json");
  j["name"] = "tiny-switch-" + std::to_string(ports);
  j["fields"]["ports"]["value"] = ports;
  auto file = std::make_unique<TempFile>(temp_path("tiny-switch-" + std::to_string(ports) + ".json"));
  write_text(file->path, j.dump(2));
  return file;
}

inline std::vector<std::string> route_names(const Topology& t, const std::vector<Edge>& route, Vertex from) {
  std::vector<std::string> out;
  for (Vertex v : route_vertices(t, from, route)) out.push_back(t[v].name);
  return out;
}

}  // namespace topo_test
