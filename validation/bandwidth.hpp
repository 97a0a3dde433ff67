#pragma once
// Measurements of this machine's streaming rates: DRAM (a STREAM-like triad and a
// read-modify-write stream) and a scratch file's sequential read and write bandwidth.  Each
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

// Peak fp32 FLOP/s of the pool's threads: independent chains of vector FMAs in registers.
double measure_peak_fp32_flops(ThreadPool& pool);

struct FileBandwidth {
  double read_Bps = 0;
  double write_Bps = 0;
  double mixed_Bps = 0;       // bytes read + written per second with one reader and one writer at once
  double read_latency_s = 0;  // median of random 4 KiB reads
  bool direct_io = false;     // O_DIRECT was used (else buffered I/O, synced, cache dropped)
};

// Writes then reads a scratch file of `file_bytes` in `dir` in `io_bytes` requests, and removes it.
FileBandwidth measure_file_bandwidth(const std::string& dir, std::size_t file_bytes, std::size_t io_bytes);

}  // namespace luwu::validation
