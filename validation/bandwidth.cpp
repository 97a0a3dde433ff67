#include "validation/bandwidth.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <fcntl.h>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <system_error>
#include <thread>
#include <unistd.h>
#include <vector>

#include <immintrin.h>

// GCC 12's AVX-512 intrinsics start from _mm512_undefined_* values it then reports as
// uninitialized; a false positive of the header, not of this code.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"

#include "validation/aligned_buffer.hpp"

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

double measure_read_modify_write_Bps(ThreadPool& pool, std::size_t elements, int repetitions) {
  const std::size_t n = elements / 3;
  AlignedBuffer<float> a(n), b(n), c(n);
  pool.parallel_for(n, kGranularity, [&](std::size_t lo, std::size_t hi) {
    std::fill(a.data() + lo, a.data() + hi, 1.0f);
    std::fill(b.data() + lo, b.data() + hi, 1.0f);
    std::fill(c.data() + lo, c.data() + hi, 1.0f);
  });
  std::vector<double> times;
  for (int r = 0; r < repetitions; ++r) {
    const auto t0 = Clock::now();
    // s * 1 + t stays 1 when s + t = 1: no overflow or denormals however often it runs.
    pool.parallel_for(n, kGranularity, [&](std::size_t lo, std::size_t hi) {
      read_modify_write(a.data() + lo, b.data() + lo, c.data() + lo, 0.5f, 0.5f, hi - lo);
    });
    times.push_back(seconds_since(t0));
  }
  return 8.0 * 3.0 * static_cast<double>(n) / median(times);
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

FileBandwidth measure_file_bandwidth(const std::string& dir, std::size_t file_bytes, std::size_t io_bytes) {
  io_bytes = std::max<std::size_t>(kPageBytes, io_bytes / kPageBytes * kPageBytes);
  file_bytes = std::max(io_bytes, file_bytes / io_bytes * io_bytes);
  const std::string path = (std::filesystem::path(dir) / ("luwusim-calibrate-" + std::to_string(::getpid()) + ".scratch")).string();
  FileBandwidth result;
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_DIRECT, 0600);
  result.direct_io = fd >= 0;
  if (fd < 0) fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) throw_errno(path + ": cannot create the scratch file");
  struct Cleanup {
    int& fd;
    const std::string& path;
    ~Cleanup() {
      if (fd >= 0) ::close(fd);
      ::unlink(path.c_str());
    }
  } cleanup{fd, path};

  AlignedBuffer<unsigned char> buffer(io_bytes);
  std::mt19937_64 rng(1);  // incompressible content, fixed
  for (std::size_t i = 0; i < io_bytes; ++i) buffer[i] = static_cast<unsigned char>(rng() >> 56);

  auto write_all = [&] {
    for (std::size_t off = 0; off < file_bytes; off += io_bytes) {
      const ssize_t n = ::pwrite(fd, buffer.data(), io_bytes, static_cast<off_t>(off));
      if (n < 0 && errno == EINVAL && result.direct_io) return false;
      if (n != static_cast<ssize_t>(io_bytes)) throw_errno(path + ": write failed");
    }
    if (::fsync(fd) != 0) throw_errno(path + ": fsync failed");
    return true;
  };
  auto t0 = Clock::now();
  if (!write_all()) {  // the filesystem accepted O_DIRECT at open but refuses the I/O
    ::close(fd);
    fd = ::open(path.c_str(), O_RDWR | O_TRUNC | O_CLOEXEC);
    if (fd < 0) throw_errno(path + ": cannot reopen the scratch file");
    result.direct_io = false;
    t0 = Clock::now();
    write_all();
  }
  result.write_Bps = static_cast<double>(file_bytes) / seconds_since(t0);
  if (!result.direct_io) ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);  // read from the device, not the cache

  t0 = Clock::now();
  for (std::size_t off = 0; off < file_bytes; off += io_bytes)
    if (::pread(fd, buffer.data(), io_bytes, static_cast<off_t>(off)) != static_cast<ssize_t>(io_bytes))
      throw_errno(path + ": read failed");
  result.read_Bps = static_cast<double>(file_bytes) / seconds_since(t0);

  // One reader and one writer at once, as the out-of-core pipeline runs: the reader streams the
  // first half of the file while the writer rewrites the second half.
  if (!result.direct_io) ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  {
    const std::size_t half = file_bytes / io_bytes / 2 * io_bytes;
    AlignedBuffer<unsigned char> read_buffer(io_bytes);
    bool write_failed = false;
    t0 = Clock::now();
    std::thread writer([&] {
      for (std::size_t off = half; off + io_bytes <= file_bytes; off += io_bytes)
        if (::pwrite(fd, buffer.data(), io_bytes, static_cast<off_t>(off)) != static_cast<ssize_t>(io_bytes)) write_failed = true;
      if (!result.direct_io && ::fdatasync(fd) != 0) write_failed = true;
    });
    bool read_failed = false;
    for (std::size_t off = 0; off < half; off += io_bytes)
      if (::pread(fd, read_buffer.data(), io_bytes, static_cast<off_t>(off)) != static_cast<ssize_t>(io_bytes)) read_failed = true;
    writer.join();
    if (read_failed || write_failed) throw std::runtime_error(path + ": mixed read/write failed");
    result.mixed_Bps = static_cast<double>(half + (file_bytes - half) / io_bytes * io_bytes) / seconds_since(t0);
  }

  if (!result.direct_io) ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  std::vector<double> latencies;
  std::uniform_int_distribution<std::size_t> page(0, file_bytes / kPageBytes - 1);
  for (int i = 0; i < 64; ++i) {
    const auto r0 = Clock::now();
    if (::pread(fd, buffer.data(), kPageBytes, static_cast<off_t>(page(rng) * kPageBytes)) != static_cast<ssize_t>(kPageBytes))
      throw_errno(path + ": read failed");
    latencies.push_back(seconds_since(r0));
  }
  std::nth_element(latencies.begin(), latencies.begin() + 32, latencies.end());
  result.read_latency_s = latencies[32];
  return result;
}

}  // namespace luwu::validation
