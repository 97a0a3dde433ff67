#include "validation/bandwidth.hpp"
#include "validation/scratch_file.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <fcntl.h>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <system_error>
#include <unistd.h>
#include <vector>

#include <immintrin.h>

// GCC 12's AVX-512 intrinsics start from _mm512_undefined_* values it then reports as
// uninitialized; a false positive of the header, not of this code.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include "validation/aligned_buffer.hpp"
#include "validation/read_update_write.hpp"

namespace luwu::validation {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

constexpr std::size_t kGranularity = 1024;

__attribute__((target("avx2"))) void triad(double* a, const double* b, const double* c, double s, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
}

__attribute__((target("avx2"))) void read_modify_write(float* a, float* b, float* c, float s, float t, std::size_t n) {
  for (std::size_t i = 0; i < n; ++i) {
    a[i] = a[i] * s + t;
    b[i] = b[i] * s + t;
    c[i] = c[i] * s + t;
  }
}

[[noreturn]] void throw_errno(const std::string& what) { throw std::system_error(errno, std::generic_category(), what); }

}  // namespace

double measure_triad_Bps(ThreadPool& pool, std::size_t n, int repetitions) {
  AlignedBuffer<double> a(n), b(n), c(n);
  pool.parallel_for(n, kGranularity, [&](std::size_t lo, std::size_t hi) {
    std::fill(a.data() + lo, a.data() + hi, 0.0);
    std::fill(b.data() + lo, b.data() + hi, 1.0);
    std::fill(c.data() + lo, c.data() + hi, 2.0);
  });
  std::vector<double> times;
  for (int r = 0; r < repetitions; ++r) {
    const auto t0 = Clock::now();
    pool.parallel_for(n, kGranularity, [&](std::size_t lo, std::size_t hi) {
      triad(a.data() + lo, b.data() + lo, c.data() + lo, 3.0, hi - lo);
    });
    times.push_back(seconds_since(t0));
  }
  return 24.0 * static_cast<double>(n) / median(times);
}

namespace {
double time_read_modify_write_Bps(ThreadPool& pool, float* a, float* b, float* c, std::size_t n, float s, float t,
                                  int repetitions) {
  std::vector<double> times;
  for (int r = 0; r < repetitions; ++r) {
    const auto t0 = Clock::now();
    pool.parallel_for(n, kGranularity, [&](std::size_t lo, std::size_t hi) {
      read_modify_write(a + lo, b + lo, c + lo, s, t, hi - lo);
    });
    times.push_back(seconds_since(t0));
  }
  return 8.0 * 3.0 * static_cast<double>(n) / median(times);
}
}  // namespace

double measure_read_modify_write_Bps(ThreadPool& pool, std::size_t elements, int repetitions) {
  const std::size_t n = elements / 3;
  AlignedBuffer<float> a(n), b(n), c(n);
  pool.parallel_for(n, kGranularity, [&](std::size_t lo, std::size_t hi) {
    std::fill(a.data() + lo, a.data() + hi, 1.0f);
    std::fill(b.data() + lo, b.data() + hi, 1.0f);
    std::fill(c.data() + lo, c.data() + hi, 1.0f);
  });
  // s * 1 + t stays 1 when s + t = 1: no overflow or denormals however often it runs.
  return time_read_modify_write_Bps(pool, a.data(), b.data(), c.data(), n, 0.5f, 0.5f, repetitions);
}

double measure_read_modify_write_Bps_on(ThreadPool& pool, float* a, float* b, float* c, std::size_t n, int repetitions) {
  // x * 1 + (-0) is x for every float x, -0 included: the arrays keep their bits.
  return time_read_modify_write_Bps(pool, a, b, c, n, 1.0f, -0.0f, repetitions);
}

namespace {
// 12 independent chains of 8-lane FMAs (enough to cover the FMA latency on current cores).
__attribute__((target("avx2,fma"))) double fma_chains_avx2(std::size_t iterations) {
  __m256 acc[12];
  for (int k = 0; k < 12; ++k) acc[k] = _mm256_set1_ps(static_cast<float>(k));
  const __m256 a = _mm256_set1_ps(0.999f), b = _mm256_set1_ps(0.001f);
  for (std::size_t i = 0; i < iterations; ++i)
    for (int k = 0; k < 12; ++k) acc[k] = _mm256_fmadd_ps(acc[k], a, b);
  __m256 sum = acc[0];
  for (int k = 1; k < 12; ++k) sum = _mm256_add_ps(sum, acc[k]);
  return _mm256_cvtss_f32(sum);
}
__attribute__((target("avx512f"))) double fma_chains_avx512(std::size_t iterations) {
  __m512 acc[12];
  for (int k = 0; k < 12; ++k) acc[k] = _mm512_set1_ps(static_cast<float>(k));
  const __m512 a = _mm512_set1_ps(0.999f), b = _mm512_set1_ps(0.001f);
  for (std::size_t i = 0; i < iterations; ++i)
    for (int k = 0; k < 12; ++k) acc[k] = _mm512_fmadd_ps(acc[k], a, b);
  __m512 sum = acc[0];
  for (int k = 1; k < 12; ++k) sum = _mm512_add_ps(sum, acc[k]);  // every chain feeds the result: none is dead code
  return _mm512_reduce_add_ps(sum);
}
}  // namespace

double measure_peak_fp32_flops(ThreadPool& pool) {
  const bool avx512 = __builtin_cpu_supports("avx512f");
  const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  if (!avx512 && !avx2) throw std::runtime_error("peak FLOP/s measurement needs AVX2+FMA or AVX-512");
  const double lanes = avx512 ? 16 : 8;
  const std::size_t iterations = 20'000'000;
  std::vector<double> sink(pool.size());
  double best = 1e300;
  for (int r = 0; r < 3; ++r) {
    const auto t0 = Clock::now();
    pool.parallel_for(pool.size(), 1, [&](std::size_t lo, std::size_t hi) {
      for (std::size_t t = lo; t < hi; ++t) sink[t] = avx512 ? fma_chains_avx512(iterations) : fma_chains_avx2(iterations);
    });
    best = std::min(best, seconds_since(t0));
  }
  // 2 FLOPs per lane per FMA, 12 chains.
  return 2.0 * lanes * 12.0 * static_cast<double>(iterations) * pool.size() / best;
}

namespace {

// One pass over a fresh scratch file: allocate it (not timed), then time an overwrite, a read and
// the in-place read -> write-back stream; the 4 KiB read latency too when `latencies` is given.
struct FilePass {
  double write_s = 0, read_s = 0, stream_s = 0;
  bool direct_io = false;
};

FilePass measure_one_file(const std::string& path, std::size_t file_bytes, std::size_t io_bytes,
                          std::vector<AlignedBuffer<unsigned char>>& slots, std::vector<double>* latencies) {
  FilePass result;
  const ScratchFile scratch = create_scratch_file(path);  // exclusively: nothing planted is followed
  int fd = scratch.fd;
  result.direct_io = scratch.direct_io;
  struct Cleanup {
    int& fd;
    const std::string& path;
    ~Cleanup() {
      if (fd >= 0) ::close(fd);
      ::unlink(path.c_str());
    }
  } cleanup{fd, path};
  unsigned char* const buffer = slots[0].data();

  auto pwrite_all = [&](const unsigned char* data, std::size_t off) {
    const ssize_t n = ::pwrite(fd, data, io_bytes, static_cast<off_t>(off));
    if (n < 0 && errno == EINVAL && result.direct_io) return false;
    if (n != static_cast<ssize_t>(io_bytes)) throw_errno(path + ": write failed");
    return true;
  };
  auto pread_all = [&](unsigned char* data, std::size_t off) {
    if (::pread(fd, data, io_bytes, static_cast<off_t>(off)) != static_cast<ssize_t>(io_bytes))
      throw_errno(path + ": read failed");
  };
  // Buffered I/O must reach the device and be read back from it, not from the page cache.
  auto sync = [&] {
    if (!result.direct_io && ::fdatasync(fd) != 0) throw_errno(path + ": fdatasync failed");
  };
  auto drop_cache = [&] {
    if (!result.direct_io) ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  };
  auto write_all = [&] {
    for (std::size_t off = 0; off < file_bytes; off += io_bytes)
      if (!pwrite_all(buffer, off)) return false;
    if (::fsync(fd) != 0) throw_errno(path + ": fsync failed");
    return true;
  };

  // The first write allocates the file; the timed one overwrites it, as an optimizer rewrites its
  // state file.
  if (!write_all()) {  // the filesystem accepted O_DIRECT at open but refuses the I/O
    ::close(fd);
    fd = ::open(path.c_str(), O_RDWR | O_TRUNC | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) throw_errno(path + ": cannot reopen the scratch file");
    result.direct_io = false;
    write_all();
  }
  auto t0 = Clock::now();
  write_all();
  result.write_s = seconds_since(t0);
  drop_cache();
  t0 = Clock::now();
  for (std::size_t off = 0; off < file_bytes; off += io_bytes) pread_all(buffer, off);
  result.read_s = seconds_since(t0);
  drop_cache();

  // The out-of-core optimizer's pattern: one reader streams the file ahead while one writer
  // rewrites each request, once read, in place (a read -> write-back stream, slots in flight).
  t0 = Clock::now();
  run_read_update_write(
      file_bytes / io_bytes, static_cast<int>(slots.size()),
      [&](std::size_t b, int slot) { pread_all(slots[slot].data(), b * io_bytes); }, [](std::size_t, int) {},
      [&](std::size_t b, int slot) {
        if (!pwrite_all(slots[slot].data(), b * io_bytes)) throw_errno(path + ": write failed");
      });
  sync();
  result.stream_s = seconds_since(t0);
  drop_cache();

  if (latencies) {
    std::mt19937_64 rng(2);
    std::uniform_int_distribution<std::size_t> page(0, file_bytes / kPageBytes - 1);
    for (int i = 0; i < 64; ++i) {
      const auto r0 = Clock::now();
      if (::pread(fd, buffer, kPageBytes, static_cast<off_t>(page(rng) * kPageBytes)) != static_cast<ssize_t>(kPageBytes))
        throw_errno(path + ": read failed");
      latencies->push_back(seconds_since(r0));
    }
  }
  return result;
}

}  // namespace

FileBandwidth measure_file_bandwidth(const std::string& dir, std::size_t file_bytes, std::size_t io_bytes, int passes) {
  io_bytes = std::max<std::size_t>(kPageBytes, io_bytes / kPageBytes * kPageBytes);
  file_bytes = std::max(io_bytes, file_bytes / io_bytes * io_bytes);
  passes = std::max(1, passes);
  const std::string path = (std::filesystem::path(dir) / ("luwusim-calibrate-" + std::to_string(::getpid()) + ".scratch")).string();

  // Slots of the in-place stream, as many as the out-of-core optimizer keeps in flight.
  std::vector<AlignedBuffer<unsigned char>> slots;
  for (int i = 0; i < 4; ++i) slots.emplace_back(io_bytes);
  std::mt19937_64 rng(1);  // incompressible content, fixed
  for (auto& slot : slots)
    for (std::size_t i = 0; i < io_bytes; ++i) slot[i] = static_cast<unsigned char>(rng() >> 56);

  // A fresh file per pass: on some devices (virtual disks here) a file's rate depends on where it
  // lands, by +-25% between files; the median of several files is the device's typical rate.
  std::vector<double> write_s, read_s, stream_s, latencies;
  FileBandwidth result;
  result.direct_io = true;
  for (int p = 0; p < passes; ++p) {
    const FilePass pass = measure_one_file(path, file_bytes, io_bytes, slots, p == 0 ? &latencies : nullptr);
    write_s.push_back(pass.write_s);
    read_s.push_back(pass.read_s);
    stream_s.push_back(pass.stream_s);
    result.direct_io = result.direct_io && pass.direct_io;
  }
  result.file_bytes = file_bytes;
  result.io_bytes = io_bytes;
  result.passes = passes;
  result.write_Bps = static_cast<double>(file_bytes) / median(write_s);
  result.read_Bps = static_cast<double>(file_bytes) / median(read_s);
  result.read_write_Bps = 2.0 * static_cast<double>(file_bytes) / median(stream_s);
  result.read_latency_s = median(latencies);
  return result;
}

}  // namespace luwu::validation
