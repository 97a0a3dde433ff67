#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <unistd.h>

#include "tests/cli/run_command.hpp"

namespace {
std::string tmp(const std::string& stem) { return "topo-cli-" + std::to_string(::getpid()) + "-" + stem; }
bool has(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }
}  // namespace

TEST_CASE("topo build / show / dot on a luwu-star of 8 workers") {
  std::string json = tmp("star.json"), dot = tmp("star.dot");
  auto r = run_luwusim("topo build --kind luwu-star --workers 8 --network 100Gb/s -o " + json);
  REQUIRE(r.exit_code == 0);
  r = run_luwusim("topo show " + json);
  CHECK(r.exit_code == 0);
  // 8 workers: 8 GPUs; 9 SmartNICs (8 + the optimizer node's one); 9 ethernet links.
  CHECK(has(r.out, "gpu                  8"));
  CHECK(has(r.out, "smartnic             9"));
  CHECK(has(r.out, "Gb/s  x 9"));
  r = run_luwusim("topo show --json " + json);
  CHECK(r.exit_code == 0);
  CHECK(has(r.out, "\"vertices_by_kind\""));
  r = run_luwusim("topo dot " + json + " -o " + dot);
  CHECK(r.exit_code == 0);
  CHECK(has(read_whole_file(dot), "graph topology {"));
  CHECK(has(read_whole_file(dot), "Gb/s ethernet"));
  std::remove(json.c_str());
  std::remove(dot.c_str());
  std::remove(tmp("star.png").c_str());
}

TEST_CASE("topo build / show / dot on a wan of 2 groups: two 10 Gb/s wide-area links, the routers drawn") {
  // 2 groups of one 2-GPU server: per group 2 NIC uplinks, a switch-router trunk and a WAN link.
  std::string json = tmp("wan.json"), dot = tmp("wan.dot");
  auto r = run_luwusim("topo build --kind wan --groups 2 --servers 1 --gpus-per-server 2 --wan-bandwidth 10Gb/s "
                       "--wan-latency-ms 10 -o " + json);
  REQUIRE(r.exit_code == 0);
  r = run_luwusim("topo show " + json);
  CHECK(r.exit_code == 0);
  CHECK(has(r.out, "built by wan"));
  CHECK(has(r.out, "gpu                  4"));
  CHECK(has(r.out, "10 Gb/s  x 2"));
  r = run_luwusim("topo dot " + json + " -o " + dot);
  CHECK(r.exit_code == 0);
  CHECK(has(read_whole_file(dot), "wan-router1"));
  r = run_luwusim("topo build --kind wan -o " + tmp("x.json"));
  CHECK(r.exit_code == 2);
  CHECK(has(r.err, "--wan-bandwidth"));
  std::remove(json.c_str());
  std::remove(dot.c_str());
  std::remove(tmp("wan.png").c_str());
}

TEST_CASE("topo: bad input exits 2 with a message naming the file and path") {
  std::string bad = tmp("bad.json");
  {
    FILE* f = std::fopen(bad.c_str(), "w");
    std::fputs(R"({"vertices": [{"name": "gpu0", "kind": "gpu", "sever": 0}], "links": []})", f);
    std::fclose(f);
  }
  auto r = run_luwusim("topo show " + bad);
  CHECK(r.exit_code == 2);
  CHECK(has(r.err, bad));
  CHECK(has(r.err, "$.vertices[0].sever"));
  CHECK(has(r.err, "did you mean \"server\""));
  std::remove(bad.c_str());
  CHECK(run_luwusim("topo build --kind ring -o " + tmp("x.json")).exit_code == 2);
  r = run_luwusim("topo build --kind dgz -o " + tmp("x.json"));
  CHECK(r.exit_code == 2);
  CHECK(has(r.err, "unknown topology kind \"dgz\" (did you mean \"dgx\"?); expected \"luwu-star\", \"dgx\", \"fat-tree\" or \"wan\""));
  CHECK(run_luwusim("topo build --kind luwu-star --network fast -o " + tmp("x.json")).exit_code == 2);
  auto bare = run_luwusim("topo build --kind luwu-star --network 100 -o " + tmp("x.json"));  // 100 B/s? say the unit
  CHECK(bare.exit_code == 2);
  CHECK(bare.err.find("--network 100: give a unit") != std::string::npos);
  CHECK(run_luwusim("topo show " + tmp("missing.json")).exit_code == 2);
}

TEST_CASE("topo build --optimizer-nodes and --trunks-per-rack: more nodes and faster trunks, bad counts exit 2") {
  std::string json = tmp("nodes.json");
  // 8 workers in 2 racks, 2 optimizer nodes of one NIC and 4 SSDs each, trunks of 4 links.
  auto r = run_luwusim("topo build --kind luwu-star --workers 8 --racks 2 --trunks-per-rack 4 --optimizer-nodes 2 -o " +
                       json);
  REQUIRE(r.exit_code == 0);
  r = run_luwusim("topo show " + json);
  CHECK(r.exit_code == 0);
  CHECK(has(r.out, "optimizer-node       2"));
  CHECK(has(r.out, "ssd                  16"));  // 8 workers' NVMe + 2 x 4
  CHECK(has(r.out, "smartnic             10"));  // 8 + 2 nodes' one
  std::remove(json.c_str());
  for (const char* bad : {"--optimizer-nodes 0", "--racks 2 --trunks-per-rack 0"}) {
    r = run_luwusim(std::string("topo build --kind luwu-star --workers 8 ") + bad + " -o " + tmp("x.json"));
    CHECK(r.exit_code == 2);
    CHECK(has(r.err, "must be >= 1"));
  }
}

TEST_CASE("topo dot: the drawing is written through a fresh temporary, so a link planted at the old fixed name is not followed") {
  // The PNG went through "<name>.png.tmp-luwusim" and a shell `mv`: a symbolic link planted there
  // had graphviz write the image into the link's target.  Graphviz is installed by setup.sh.
  if (std::system("command -v dot >/dev/null 2>&1") != 0) return;
  std::string json = tmp("planted.json"), dot = tmp("planted's name.dot"), png = tmp("planted's name.png");
  const std::string victim = tmp("victim.txt"), planted = png + ".tmp-luwusim";
  REQUIRE(run_luwusim("topo build --kind luwu-star --workers 2 -o " + json).exit_code == 0);
  {
    std::ofstream v(victim);
    v << "keep me";
  }
  std::remove(planted.c_str());
  REQUIRE(::symlink(victim.c_str(), planted.c_str()) == 0);
  // A quote in the name broke the shell command's quoting; the renderer now runs without a shell.
  auto r = run_luwusim("topo dot " + json + " -o \"" + dot + "\"");
  CHECK(r.exit_code == 0);
  CHECK(read_whole_file(victim) == "keep me");
  CHECK(read_whole_file(png).substr(1, 3) == "PNG");
  for (const auto& f : {json, dot, png, victim, planted}) std::remove(f.c_str());
}
