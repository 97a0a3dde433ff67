#pragma once
// SimGrid allows one engine per process and keeps global state, so each simulation runs in a
// forked child that sends its result back as text.  This also keeps one failing configuration
// from taking down a whole comparison or sweep.
//
// The protocol, in one place for run_isolated and the sweep runner (sim/sweep_runner.cpp):
// fork; the child runs a function and writes "1<result>" or "0<error message>" into a pipe, then
// _exits with 0, or with 1 when the pipe would not take the whole message; the parent reads the
// pipe to its end, reaps the child and decodes.  A child counts as done only if it exited with 0
// after a whole message: one killed by a signal (the signal is named) or exiting otherwise is a
// failure even if it had written something.
//
// Children die with their parent: right after fork the child asks for SIGKILL when the parent
// goes (PR_SET_PDEATHSIG) and exits at once if the parent is already gone.  Linux sends that
// signal when the *thread* that forked ends, so fork from a thread that outlives the child (the
// main thread, as luwusim does).
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

namespace luwu::sim {

struct IsolatedResult {
  bool ok;
  std::string output;  // what the function returned (ok), or the error message
  // The child did not end cleanly with a whole message (killed by a signal, or exited without
  // one): a crash, as opposed to an exception the function threw.
  bool crashed = false;
};

// A child process that crashed (IsolatedResult::crashed), as an exception: a sweep counts the
// point whose simulation crashed as failed, while an ordinary error of one system (one luwusim
// cannot simulate yet) is only that system's entry.
class ProcessCrashed : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "killed by signal 9 (SIGKILL)", "exited with code 3": how a child ended, from waitpid's status.
inline std::string exit_status_text(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
    const char* abbrev = sigabbrev_np(sig);  // "KILL", "SEGV"
#else
    const char* abbrev = sig == SIGKILL   ? "KILL"
                         : sig == SIGSEGV ? "SEGV"
                         : sig == SIGABRT ? "ABRT"
                         : sig == SIGTERM ? "TERM"
                         : sig == SIGINT  ? "INT"
                                          : nullptr;
#endif
    return "killed by signal " + std::to_string(sig) + (abbrev ? " (SIG" + std::string(abbrev) + ")" : std::string());
  }
  if (WIFEXITED(status)) return "exited with code " + std::to_string(WEXITSTATUS(status));
  return "ended with wait status " + std::to_string(status);
}

// One child process running one function, started now and collected later: poll() its fd(),
// read_available() when it is readable, and finish() once that returns false (or at once, to
// block until the child is done).  Move-only; destroying a child that was not finished kills it
// (and its process group, if it leads one) and reaps it.
class IsolatedChild {
 public:
  struct Options {
    std::string label = "child process";  // failures read "<label> killed by signal ..."
    bool own_process_group = false;  // the child leads a new process group, which kill() takes whole
  };

  // Forks and runs `fn` in the child; the parent returns at once.  std::runtime_error if the
  // pipe or the fork fails.
  static IsolatedChild start(const std::function<std::string()>& fn, Options options) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe failed: ") + std::strerror(errno));
    std::fflush(nullptr);  // the child must not print what the parent had buffered
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) {
      const int err = errno;
      ::close(fds[0]);
      ::close(fds[1]);
      throw std::runtime_error(std::string("fork failed: ") + std::strerror(err));
    }
    if (pid == 0) {
      ::prctl(PR_SET_PDEATHSIG, SIGKILL);
      if (::getppid() != parent) ::_exit(1);  // the parent died before prctl: nobody waits for us
      if (options.own_process_group) ::setpgid(0, 0);
      ::close(fds[0]);
      char status = '1';
      std::string payload;
      try {
        payload = fn();
      } catch (const std::exception& e) {
        status = '0';
        payload = e.what();
      } catch (...) {
        status = '0';
        payload = "unknown error";
      }
      const bool whole = write_all(fds[1], &status, 1) && write_all(fds[1], payload.data(), payload.size());
      ::close(fds[1]);
      ::_exit(whole ? 0 : 1);
    }
    if (options.own_process_group) ::setpgid(pid, pid);  // also here, so a kill right after fork finds the group
    ::close(fds[1]);
    return IsolatedChild(pid, fds[0], std::move(options));
  }

  IsolatedChild(IsolatedChild&& other) noexcept
      : pid_(other.pid_), fd_(other.fd_), options_(std::move(other.options_)), output_(std::move(other.output_)) {
    other.pid_ = -1;
    other.fd_ = -1;
  }
  IsolatedChild& operator=(IsolatedChild&& other) noexcept {
    if (this != &other) {
      abandon();
      pid_ = other.pid_, fd_ = other.fd_;
      options_ = std::move(other.options_);
      output_ = std::move(other.output_);
      other.pid_ = -1, other.fd_ = -1;
    }
    return *this;
  }
  IsolatedChild(const IsolatedChild&) = delete;
  IsolatedChild& operator=(const IsolatedChild&) = delete;
  ~IsolatedChild() { abandon(); }

  pid_t pid() const { return pid_; }
  // The read end of the pipe, for poll(); -1 once the output has ended.
  int fd() const { return fd_; }

  // Reads once what the child has written (blocking until it writes or ends, unless poll() said
  // fd() is readable).  False once the output has ended: finish() then only reaps.
  bool read_available() {
    if (fd_ < 0) return false;
    char buf[65536];
    const ssize_t n = ::read(fd_, buf, sizeof buf);
    if (n < 0 && errno == EINTR) return true;
    if (n > 0) {
      output_.append(buf, static_cast<std::size_t>(n));
      return true;
    }
    ::close(fd_);  // end of output, or a read error: either way nothing more comes
    fd_ = -1;
    return false;
  }

  // Reads the rest of the output, reaps the child and decodes what it sent.  Once.
  IsolatedResult finish() {
    if (pid_ < 0) throw std::logic_error("IsolatedChild::finish: no child (moved from, or finished)");
    while (read_available()) {
    }
    const std::optional<int> status = reap();
    if (status && WIFEXITED(*status) && WEXITSTATUS(*status) == 0 && !output_.empty() &&
        (output_[0] == '1' || output_[0] == '0'))
      return {output_[0] == '1', output_.substr(1)};
    return {false,
            options_.label + " " + (status ? exit_status_text(*status) : "could not be waited for") +
                (output_.empty() ? " without a result" : " without a whole result"),
            true};
  }

  // SIGKILL to the child (and its process group); finish() then reports it killed.
  void kill() {
    if (pid_ < 0) return;
    if (options_.own_process_group) ::kill(-pid_, SIGKILL);
    ::kill(pid_, SIGKILL);
  }

 private:
  IsolatedChild(pid_t pid, int fd, Options options) : pid_(pid), fd_(fd), options_(std::move(options)) {}

  static bool write_all(int fd, const char* p, std::size_t left) {
    while (left > 0) {
      const ssize_t n = ::write(fd, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      p += n, left -= static_cast<std::size_t>(n);
    }
    return true;
  }

  // waitpid's status, or nothing if the child could not be waited for.
  std::optional<int> reap() {
    int status = 0;
    pid_t got;
    while ((got = ::waitpid(pid_, &status, 0)) < 0 && errno == EINTR) {
    }
    pid_ = -1;
    if (got < 0) return std::nullopt;
    return status;
  }

  void abandon() {
    if (fd_ >= 0) ::close(fd_), fd_ = -1;
    if (pid_ >= 0) {
      kill();
      reap();
    }
  }

  pid_t pid_;
  int fd_;
  Options options_;
  std::string output_;
};

// Nothing if the child succeeded; otherwise "<what> failed: <why>" as ProcessCrashed when it
// crashed, as std::runtime_error when the function threw.
inline void throw_unless_ok(const IsolatedResult& r, const std::string& what) {
  if (r.ok) return;
  const std::string message = what + " failed: " + r.output;
  if (r.crashed) throw ProcessCrashed(message);
  throw std::runtime_error(message);
}

// Runs `fn` in a child process and waits for it.  The child's exceptions come back as
// {false, what()}; a child that crashes comes back as {false, "simulation process killed by
// signal 11 (SIGSEGV) without a result"}.
inline IsolatedResult run_isolated(const std::function<std::string()>& fn) {
  return IsolatedChild::start(fn, {.label = "simulation process"}).finish();
}

}  // namespace luwu::sim
