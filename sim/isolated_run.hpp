#pragma once
// SimGrid allows one engine per process and keeps global state, so each simulation runs in a
// forked child that sends its result back as text.  This also keeps one failing configuration
// from taking down a whole comparison or sweep.
#include <cerrno>
#include <cstdio>
#include <functional>
#include <stdexcept>
#include <string>
#include <sys/wait.h>
#include <unistd.h>

namespace luwu::sim {

struct IsolatedResult {
  bool ok;
  std::string output;  // what the function returned (ok), or the error message
};

// Runs `fn` in a child process.  The child's exceptions come back as {false, what()}.
inline IsolatedResult run_isolated(const std::function<std::string()>& fn) {
  int fds[2];
  if (pipe(fds) != 0) throw std::runtime_error("pipe failed");
  std::fflush(nullptr);  // the child must not print what the parent had buffered
  pid_t pid = fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    close(fds[0]);
    std::string payload;
    char status = '1';
    try {
      payload = fn();
    } catch (const std::exception& e) {
      status = '0';
      payload = e.what();
    } catch (...) {
      status = '0';
      payload = "unknown error";
    }
    std::string msg = status + payload;
    const char* p = msg.data();
    std::size_t left = msg.size();
    while (left > 0) {
      ssize_t n = write(fds[1], p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      p += n, left -= static_cast<std::size_t>(n);
    }
    close(fds[1]);
    _exit(0);
  }
  close(fds[1]);
  std::string msg;
  char buf[65536];
  for (;;) {
    ssize_t n = read(fds[0], buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    msg.append(buf, static_cast<std::size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (msg.empty()) {
    std::string why = WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status))
                                          : "exited with code " + std::to_string(WEXITSTATUS(status));
    return {false, "simulation process " + why + " without a result"};
  }
  return {msg[0] == '1', msg.substr(1)};
}

}  // namespace luwu::sim
