// sim/experiment/isolated_run.hpp: a function run in a forked child, its result or its error carried back
// through a pipe, and a child that crashes or is killed reported as a failure naming the signal.
#include <doctest/doctest.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <poll.h>
#include <stdexcept>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#include "sim/experiment/isolated_run.hpp"

using namespace luwu::sim;

namespace {


// The process's state letter from /proc/<pid>/stat ('Z' for a zombie), or 0 once it is gone.
char process_state(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return 0;
  const auto close = line.rfind(')');  // the command name may hold spaces and parentheses
  return close == std::string::npos || close + 2 >= line.size() ? 0 : line[close + 2];
}

}  // namespace

TEST_CASE("run_isolated returns what the function returned, computed in another process") {
  const pid_t parent = ::getpid();
  const IsolatedResult r = run_isolated([] { return std::to_string(::getpid()) + " " + std::to_string(::getppid()); });
  REQUIRE(r.ok);
  const auto space = r.output.find(' ');
  REQUIRE(space != std::string::npos);
  CHECK(std::stol(r.output.substr(0, space)) != parent);        // not this process...
  CHECK(std::stol(r.output.substr(space + 1)) == parent);       // ...but its child
  // Large results cross the pipe whole (beyond one 64 KiB pipe buffer and one read).
  const IsolatedResult big = run_isolated([] { return std::string(1 << 20, 'x') + "end"; });
  REQUIRE(big.ok);
  CHECK(big.output.size() == (1u << 20) + 3);
  CHECK(big.output.substr(big.output.size() - 3) == "end");
  // An empty result is a result.
  const IsolatedResult empty = run_isolated([] { return std::string(); });
  CHECK(empty.ok);
  CHECK(empty.output.empty());
}

TEST_CASE("the child's exception comes back as the error message") {
  IsolatedResult r = run_isolated([]() -> std::string { throw std::invalid_argument("no such system"); });
  CHECK_FALSE(r.ok);
  CHECK(r.output == "no such system");
  r = run_isolated([]() -> std::string { throw 42; });
  CHECK_FALSE(r.ok);
  CHECK(r.output == "unknown error");
}

TEST_CASE("a child that dies of a signal or exits without a result is a failure naming how") {
  IsolatedResult r = run_isolated([]() -> std::string {
    std::raise(SIGKILL);
    return "never";
  });
  CHECK_FALSE(r.ok);
  CHECK(r.output == "simulation process killed by signal 9 (SIGKILL) without a result");

  r = run_isolated([]() -> std::string {
    std::signal(SIGSEGV, SIG_DFL);
    std::raise(SIGSEGV);
    return "never";
  });
  CHECK_FALSE(r.ok);
  CHECK(r.output == "simulation process killed by signal 11 (SIGSEGV) without a result");

  r = run_isolated([]() -> std::string { ::_exit(3); });
  CHECK_FALSE(r.ok);
  CHECK(r.output == "simulation process exited with code 3 without a result");

  r = run_isolated([]() -> std::string { ::_exit(0); });  // exit 0, but nothing written: still no result
  CHECK_FALSE(r.ok);
  CHECK(r.output == "simulation process exited with code 0 without a result");
}

TEST_CASE("a child killed halfway through writing its result is not a success") {
  // 8 MB cannot pass a pipe of 64 KiB that nobody reads: the child is blocked in write when the
  // parent, having read only the beginning, kills it.
  IsolatedChild c = IsolatedChild::start([] { return std::string(8 << 20, 'z'); }, {.label = "test child"});
  pollfd p{c.fd(), POLLIN, 0};
  REQUIRE(::poll(&p, 1, -1) == 1);
  REQUIRE(c.read_available());  // the beginning: "1zzz..."
  c.kill();
  const IsolatedResult r = c.finish();
  CHECK_FALSE(r.ok);
  CHECK(r.output == "test child killed by signal 9 (SIGKILL) without a whole result");
}

TEST_CASE("several children run at once and are collected in any order") {
  std::vector<IsolatedChild> children;
  for (int i = 0; i < 4; ++i)
    children.push_back(IsolatedChild::start([i] { return "child " + std::to_string(i); }, {.label = "test child"}));
  std::vector<pid_t> pids;
  for (const auto& c : children) {
    CHECK(c.fd() >= 0);
    pids.push_back(c.pid());
  }
  for (std::size_t a = 0; a < pids.size(); ++a)
    for (std::size_t b = a + 1; b < pids.size(); ++b) CHECK(pids[a] != pids[b]);
  for (int i = 3; i >= 0; --i) {
    const IsolatedResult r = children[static_cast<std::size_t>(i)].finish();
    CHECK(r.ok);
    CHECK(r.output == "child " + std::to_string(i));
    CHECK(children[static_cast<std::size_t>(i)].fd() == -1);
  }
  CHECK_THROWS_AS(children[0].finish(), std::logic_error);  // once
}

TEST_CASE("poll and read_available collect a child as the sweep runner does") {
  IsolatedChild c = IsolatedChild::start([] { return std::string(200000, 'y'); }, {.label = "test child"});
  int reads = 0;
  for (;;) {
    pollfd p{c.fd(), POLLIN, 0};
    REQUIRE(::poll(&p, 1, -1) == 1);
    ++reads;
    if (!c.read_available()) break;
  }
  CHECK(reads > 1);  // 200 kB do not fit in one read of 64 KiB
  CHECK(c.fd() == -1);
  const IsolatedResult r = c.finish();
  CHECK(r.ok);
  CHECK(r.output == std::string(200000, 'y'));
}

TEST_CASE("kill ends a running child, with its process group when it leads one") {
  IsolatedChild c = IsolatedChild::start(
      []() -> std::string {
        ::pause();
        return "woken";
      },
      {.label = "test child", .own_process_group = true});
  // Both sides set the group right after fork, so it is there as soon as start returns.
  CHECK(::getpgid(c.pid()) == c.pid());
  c.kill();
  const IsolatedResult r = c.finish();
  CHECK_FALSE(r.ok);
  CHECK(r.output == "test child killed by signal 9 (SIGKILL) without a result");

  // Destroying a child that was not finished kills and reaps it: no process is left behind.
  pid_t left = 0;
  {
    IsolatedChild d = IsolatedChild::start(
        []() -> std::string {
          ::pause();
          return "woken";
        },
        {.label = "test child"});
    left = d.pid();
  }
  CHECK(process_state(left) == 0);
}

TEST_CASE("a child dies with its parent") {
  // The middle process starts a grandchild that would sleep for a minute, reports its pid and
  // exits without reaping or killing it (the IsolatedChild is leaked on purpose).
  const IsolatedResult r = run_isolated([] {
    auto* grandchild = new IsolatedChild(IsolatedChild::start(
        []() -> std::string {
          ::sleep(60);
          return "slept";
        },
        {.label = "grandchild"}));
    return std::to_string(grandchild->pid());
  });
  REQUIRE(r.ok);
  const pid_t grandchild = static_cast<pid_t>(std::stol(r.output));
  // PR_SET_PDEATHSIG: SIGKILL as the middle process ended.  Whoever adopted it reaps it; until
  // then it is a zombie.  Wait for that (well under the minute it would otherwise sleep).
  char state = process_state(grandchild);
  for (int i = 0; i < 500 && state != 0 && state != 'Z' && state != 'X'; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    state = process_state(grandchild);
  }
  CHECK((state == 0 || state == 'Z' || state == 'X'));
}

TEST_CASE("exit_status_text names the signal or the exit code") {
  CHECK(exit_status_text(0) == "exited with code 0");
  CHECK(exit_status_text(2 << 8) == "exited with code 2");  // waitpid's encoding of exit(2)
  CHECK(exit_status_text(SIGABRT) == "killed by signal 6 (SIGABRT)");
  CHECK(exit_status_text(SIGTERM) == "killed by signal 15 (SIGTERM)");
}
