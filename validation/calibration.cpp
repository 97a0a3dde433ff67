#include "validation/calibration.hpp"

#include <chrono>
#include <ctime>
#include <sys/statvfs.h>
#include <thread>
#include <unistd.h>

#include <fmt/format.h>

#include "validation/adam_timing.hpp"
#include "validation/step_time_validation.hpp"

namespace luwu::validation {

namespace {

std::string this_hostname() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "unknown-host";
  return name;
}

std::string today() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm utc{};
  ::gmtime_r(&now, &utc);
  char text[16];
  std::strftime(text, sizeof text, "%Y-%m-%d", &utc);
  return text;
}

Json field(double value, const std::string& unit, const std::string& source) {
  return Json{{"value", value}, {"unit", unit}, {"source", source}};
}

}  // namespace

Calibration calibrate_host(const CalibrationOptions& o, const std::function<void(const std::string&)>& progress) {
  Calibration c;
  c.hostname = this_hostname();
  c.date = today();
  c.threads = o.threads != 0 ? o.threads : std::max(1u, std::thread::hardware_concurrency());
  c.scratch_dir = o.scratch_dir;
  c.dram_capacity_bytes = static_cast<double>(::sysconf(_SC_PHYS_PAGES)) * static_cast<double>(::sysconf(_SC_PAGESIZE));
  struct statvfs fs{};
  if (::statvfs(o.scratch_dir.c_str(), &fs) == 0) c.file_capacity_bytes = static_cast<double>(fs.f_blocks) * fs.f_frsize;

  ThreadPool pool(c.threads);
  const std::size_t rmw_elements = o.quick ? (64u << 20) : (256u << 20);    // 256 MiB / 1 GiB of fp32
  const std::size_t triad_elements = o.quick ? (16u << 20) : (128u << 20);  // 128 MiB / 1 GiB per fp64 array
  const int repetitions = o.quick ? 5 : 9;
  progress(fmt::format("calibrate: DRAM read-modify-write stream, {} thread(s)", c.threads));
  c.read_modify_write_Bps = measure_read_modify_write_Bps(pool, rmw_elements, repetitions);
  progress(fmt::format("calibrate:   {:.2f} GB/s", c.read_modify_write_Bps / 1e9));
  progress("calibrate: DRAM triad");
  c.triad_Bps = measure_triad_Bps(pool, triad_elements, repetitions);
  progress(fmt::format("calibrate:   {:.2f} GB/s", c.triad_Bps / 1e9));
  progress("calibrate: peak fp32 FLOP/s");
  c.peak_fp32_flops = measure_peak_fp32_flops(pool);
  progress(fmt::format("calibrate:   {:.1f} GFLOP/s", c.peak_fp32_flops / 1e9));
  if (o.disk) {
    // The out-of-core step's own pattern: its request size and file size, O_DIRECT where the
    // filesystem takes it.
    const OutOfCoreCase ooc = validation_out_of_core_case(o.quick);
    const std::size_t request = o.disk_request_bytes != 0 ? o.disk_request_bytes : ooc.request_bytes();
    const std::size_t file = o.disk_file_bytes != 0 ? o.disk_file_bytes : ooc.file_bytes();
    progress(fmt::format("calibrate: scratch file bandwidth in {}: {:.2f} MiB requests over a {:.0f} MiB file, as the "
                         "out-of-core step issues them",
                         o.scratch_dir, request / 1048576.0, file / 1048576.0));
    c.file = measure_file_bandwidth(o.scratch_dir, file, request, o.quick ? 3 : 5);
    progress(fmt::format("calibrate:   read {:.2f} GB/s, write {:.2f} GB/s, in-place read -> write-back {:.2f} GB/s "
                         "(read + written), 4 KiB read latency {:.1f} us, {}",
                         c.file.read_Bps / 1e9, c.file.write_Bps / 1e9, c.file.read_write_Bps / 1e9, c.file.read_latency_s * 1e6,
                         c.file.direct_io ? "O_DIRECT"
                                          : "buffered I/O: the filesystem refused O_DIRECT (tmpfs?), so the rates are "
                                            "the page cache's with fsync, not the device's"));
  }
  if (!o.kernels) return c;
  const std::size_t adam_params = o.quick ? (16u << 20) : (64u << 20);
  progress("calibrate: Adam step in memory");
  c.adam_in_memory_params_per_s =
      static_cast<double>(adam_params) / time_adam_in_memory_s(pool, best_isa(), HalfFormat::fp16, adam_params, o.quick ? 3 : 5);
  progress(fmt::format("calibrate:   {:.3e} params/s", c.adam_in_memory_params_per_s));
  progress("calibrate: Adam step out of core");
  const OutOfCoreRun ooc = time_adam_out_of_core(pool, best_isa(), HalfFormat::fp16, o.scratch_dir, adam_params,
                                                 o.quick ? (32u << 20) : (128u << 20), o.quick ? 2 : 3, o.quick ? 2 : 3);
  c.adam_out_of_core_params_per_s = static_cast<double>(adam_params) / ooc.seconds_per_step;
  progress(fmt::format("calibrate:   {:.3e} params/s", c.adam_out_of_core_params_per_s));
  return c;
}

Json host_profile_json(const Calibration& c) {
  const std::string on = "calibrated on " + c.hostname + " " + c.date;
  Json fields;
  fields["cores"] = {{"value", c.threads}, {"unit", "count"}, {"source", on + ": hardware threads used by the measurements"}};
  fields["cpu_peak_fp32_flops"] =
      field(c.peak_fp32_flops / 1e9, "GFLOP/s", on + ": independent vector FMA chains on all threads");
  fields["dram_capacity"] = field(c.dram_capacity_bytes / 1e9, "GB", on + ": physical memory reported by the OS");
  fields["dram_theoretical_bandwidth"] =
      field(c.read_modify_write_Bps / 1e9, "GB/s",
            on + ": achieved read-modify-write stream (a[i] = a[i] s + t, 8 B/element, median of repetitions), "
                 "the ceiling of an in-place optimizer update; it stands for the bandwidth with stream efficiency 1, "
                 "so that achieved = measured (the wire rate is not measurable from software)");
  fields["dram_stream_efficiency"] =
      field(1.0, "fraction", on + ": 1 because dram_theoretical_bandwidth already holds the achieved stream");
  std::string description = fmt::format(
      "this machine measured as an optimizer node ({} threads): read-modify-write {:.2f} GB/s, STREAM-like triad "
      "{:.2f} GB/s (24 B/element)",
      c.threads, c.read_modify_write_Bps / 1e9, c.triad_Bps / 1e9);
  if (c.adam_in_memory_params_per_s > 0)
    description += fmt::format(", mixed-precision AdamW step {:.3e} params/s in memory and {:.3e} params/s out of core "
                               "(state file in {})",
                               c.adam_in_memory_params_per_s, c.adam_out_of_core_params_per_s, c.scratch_dir);
  return Json{{"name", "calibrated-host-" + c.hostname},
              {"kind", "host"},
              {"description", description},
              {"fields", fields}};
}

Json ssd_profile_json(const Calibration& c) {
  const std::string on = "calibrated on " + c.hostname + " " + c.date;
  const std::string how = fmt::format("{}, {:.2f} MiB requests, median of {} passes over a {:.0f} MiB file",
                                      c.file.direct_io ? "O_DIRECT" : "buffered I/O with fsync, cache dropped (O_DIRECT refused)",
                                      c.file.io_bytes / 1048576.0, c.file.passes, c.file.file_bytes / 1048576.0);
  Json fields;
  fields["read_bandwidth"] = field(c.file.read_Bps / 1e9, "GB/s", on + ": sequential read of a scratch file in " + c.scratch_dir + " (" + how + ")");
  fields["write_bandwidth"] = field(c.file.write_Bps / 1e9, "GB/s", on + ": sequential write of a scratch file in " + c.scratch_dir + " (" + how + ")");
  fields["read_write_bandwidth"] =
      field(c.file.read_write_Bps / 1e9, "GB/s",
            on + ": bytes read plus written per second while one reader streams the file and one writer rewrites "
                 "each request in place once read, 4 in flight, the out-of-core optimizer's requests and pattern "
                 "(validation/out_of_core_adam.hpp; " + how + "); the out-of-core prediction's binding rate");
  fields["capacity"] = field(c.file_capacity_bytes / 1e9, "GB", on + ": size of the filesystem holding " + c.scratch_dir);
  fields["latency"] = field(c.file.read_latency_s * 1e6, "us", on + ": median of 64 random 4 KiB reads");
  return Json{{"name", "calibrated-ssd-" + c.hostname},
              {"kind", "ssd"},
              {"description", fmt::format("the device under {} on {}, measured as the optimizer's SSD tier",
                                          c.scratch_dir, c.hostname)},
              {"fields", fields}};
}

std::string ssd_profile_path_for(const std::string& host_profile_path) {
  const std::string suffix = ".json";
  if (host_profile_path.size() > suffix.size() &&
      host_profile_path.compare(host_profile_path.size() - suffix.size(), suffix.size(), suffix) == 0)
    return host_profile_path.substr(0, host_profile_path.size() - suffix.size()) + "-ssd.json";
  return host_profile_path + "-ssd.json";
}

}  // namespace luwu::validation
