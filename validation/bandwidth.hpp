#pragma once
// Measurements of this machine's streaming rates: DRAM (a STREAM-like triad and a
// read-modify-write stream) and a scratch file's sequential read and write bandwidth, and its
// in-place read -> write-back stream (the out-of-core optimizer's pattern).  Each
// memory figure is the best of several repetitions (STREAM's convention) over arrays far larger
// than the caches, first touched by the threads that later stream them.
#include <cstddef>
#include <string>

#include "validation/thread_pool.hpp"

namespace luwu::validation {

// a[i] = b[i] + s * c[i] over doubles, counted 24 B/element as STREAM does (the write-allocate
// read of a[i] is not counted, as in STREAM).
double measure_triad_Bps(ThreadPool& pool, std::size_t elements, int repetitions);

// a[i] = a[i] * s + t in place over three float arrays of elements / 3 each, counted 8 B per
// element: the ceiling of a kernel that rewrites the lines it has just read, with as many
// concurrent streams as the optimizer step's state (master, m, v).
double measure_read_modify_write_Bps(ThreadPool& pool, std::size_t elements, int repetitions);
// The same stream over three given arrays of n floats, leaving their bits unchanged: the rate of
// the very memory a kernel works on.
double measure_read_modify_write_Bps_on(ThreadPool& pool, float* a, float* b, float* c, std::size_t n, int repetitions);

// Peak fp32 FLOP/s of the pool's threads: independent chains of vector FMAs in registers.
double measure_peak_fp32_flops(ThreadPool& pool);

struct FileBandwidth {
  double read_Bps = 0;
  double write_Bps = 0;
  double read_write_Bps = 0;  // bytes read + written per second by the in-place read -> write-back stream
  double read_latency_s = 0;  // median of random 4 KiB reads
  bool direct_io = false;     // O_DIRECT was used (else buffered I/O, synced, cache dropped)
  std::size_t file_bytes = 0, io_bytes = 0;
  int passes = 0;
};

// `passes` times, on a fresh scratch file of `file_bytes` in `dir` each time: allocates it, then
// times an overwrite, a read and the in-place stream (one reader ahead, one writer rewriting each
// `io_bytes` request once read, 4 requests in flight), and removes it.  Each rate is the median
// over the files (a file's rate can depend on where it lands); the latency is the median of 64
// random 4 KiB reads of the first file.
FileBandwidth measure_file_bandwidth(const std::string& dir, std::size_t file_bytes, std::size_t io_bytes,
                                     int passes = 3);

}  // namespace luwu::validation
