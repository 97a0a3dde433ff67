#pragma once
// Runs the real `luwusim` binary for smoke tests: exit code, stdout and stderr.
#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

struct CommandResult {
  int exit_code;
  std::string out;
  std::string err;
};

inline std::string read_whole_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// `args` is appended to the binary's path as a shell command line; `prefix` goes before the
// binary (a wrapper such as "timeout 60").
inline CommandResult run_luwusim(const std::string& args, const std::string& prefix = "") {
  static int counter = 0;
  std::string base = "cli-run-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
  std::string cmd = prefix + (prefix.empty() ? "" : " ") + std::string(LUWUSIM_BINARY) + " " + args + " >" + base +
                    ".out 2>" + base + ".err";
  int status = std::system(cmd.c_str());
  CommandResult r{WIFEXITED(status) ? WEXITSTATUS(status) : -1, read_whole_file(base + ".out"),
                  read_whole_file(base + ".err")};
  std::remove((base + ".out").c_str());
  std::remove((base + ".err").c_str());
  return r;
}
