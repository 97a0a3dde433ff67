#pragma once
// Each `luwusim` subcommand lives in its own file and registers itself here at start-up, so the
// commands stay apart and main.cpp never changes when one is added.  A command only parses
// arguments and calls the libraries.
#include <functional>
#include <map>
#include <string>

#include <CLI/CLI.hpp>

namespace luwu::cli {

// Adds the command's options (and nested subcommands) to `app`, returns what to run when the
// command was chosen; the runner returns the process exit code.
using CommandSetup = std::function<std::function<int()>(CLI::App& app)>;

struct CommandEntry {
  std::string description;
  CommandSetup setup;
};

inline std::map<std::string, CommandEntry>& command_registry() {
  static std::map<std::string, CommandEntry> registry;  // sorted: help lists commands in a stable order
  return registry;
}

inline bool register_command(const std::string& name, const std::string& description, CommandSetup setup) {
  command_registry()[name] = CommandEntry{description, std::move(setup)};
  return true;
}

}  // namespace luwu::cli
