// luwusim: how long does one training iteration take, under which system, and why.
#include <cstdio>
#include <iostream>
#include <memory>
#include <vector>

#include "cli/command_registry.hpp"
#include "common/input_error.hpp"

int main(int argc, char** argv) {
  CLI::App app{"luwusim: a discrete-event simulator of LuWu and the data-parallel training systems it is measured against"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "luwusim 0.1.0");

  std::vector<std::pair<CLI::App*, std::function<int()>>> runners;
  for (auto& [name, entry] : luwu::cli::command_registry()) {
    CLI::App* sub = app.add_subcommand(name, entry.description);
    runners.emplace_back(sub, entry.setup(*sub));
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;  // a bad command line is bad input
  }

  try {
    for (auto& [sub, run] : runners)
      if (sub->parsed()) {
        const int code = run();
        // Results go to stdout: a write that failed (a full disk, a closed pipe, a file-size
        // limit) must not pass for a result.
        std::cout.flush();
        if (!std::cout || std::fflush(stdout) != 0 || std::ferror(stdout)) {
          std::cerr << "error: writing the results to standard output failed\n";
          return 1;
        }
        return code;
      }
  } catch (const luwu::InputError& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  } catch (const std::invalid_argument& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
