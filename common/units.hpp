#pragma once
// Quantities with units, converted to SI base units (bytes, bytes/s, seconds, FLOP/s) at the edge
// of the program.  Inside, every quantity is a double in base units and its name says which.
#include <cctype>
#include <cmath>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>

#include <fmt/format.h>

namespace luwu::units {

// Dimensions a unit string can have.
enum class Dim { Bytes, BytesPerSecond, Seconds, FlopsPerSecond, Flops, Count, Fraction, Watts, Hertz,
                 PacketsPerSecond };

struct Unit {
  Dim dim;
  double to_base;  // multiply a value in this unit by to_base to get base units
};

// The unit table.  Decimal prefixes (k, M, G, T) are powers of 10; binary ones (KiB, MiB, GiB,
// TiB) powers of 2.  Bit rates are converted to bytes/s (/8).
inline const std::map<std::string, Unit>& unit_table() {
  static const std::map<std::string, Unit> t = {
      {"B", {Dim::Bytes, 1}},
      {"kB", {Dim::Bytes, 1e3}},
      {"KB", {Dim::Bytes, 1e3}},
      {"MB", {Dim::Bytes, 1e6}},
      {"GB", {Dim::Bytes, 1e9}},
      {"TB", {Dim::Bytes, 1e12}},
      {"KiB", {Dim::Bytes, 1024.0}},
      {"MiB", {Dim::Bytes, 1024.0 * 1024}},
      {"GiB", {Dim::Bytes, 1024.0 * 1024 * 1024}},
      {"TiB", {Dim::Bytes, 1024.0 * 1024 * 1024 * 1024}},
      {"B/s", {Dim::BytesPerSecond, 1}},
      {"MB/s", {Dim::BytesPerSecond, 1e6}},
      {"GB/s", {Dim::BytesPerSecond, 1e9}},
      {"TB/s", {Dim::BytesPerSecond, 1e12}},
      {"GiB/s", {Dim::BytesPerSecond, 1024.0 * 1024 * 1024}},
      {"b/s", {Dim::BytesPerSecond, 1.0 / 8}},
      {"bps", {Dim::BytesPerSecond, 1.0 / 8}},
      {"kb/s", {Dim::BytesPerSecond, 1e3 / 8}},
      {"kbps", {Dim::BytesPerSecond, 1e3 / 8}},
      {"Mb/s", {Dim::BytesPerSecond, 1e6 / 8}},
      {"Mbps", {Dim::BytesPerSecond, 1e6 / 8}},
      {"Gb/s", {Dim::BytesPerSecond, 1e9 / 8}},
      {"Gbps", {Dim::BytesPerSecond, 1e9 / 8}},
      {"Tb/s", {Dim::BytesPerSecond, 1e12 / 8}},
      {"Tbps", {Dim::BytesPerSecond, 1e12 / 8}},
      {"GT/s", {Dim::Hertz, 1e9}},  // PCIe transfer rate per lane
      {"s", {Dim::Seconds, 1}},
      {"ms", {Dim::Seconds, 1e-3}},
      {"us", {Dim::Seconds, 1e-6}},
      {"ns", {Dim::Seconds, 1e-9}},
      {"FLOP", {Dim::Flops, 1}},
      {"FLOP/s", {Dim::FlopsPerSecond, 1}},
      {"GFLOP/s", {Dim::FlopsPerSecond, 1e9}},
      {"TFLOP/s", {Dim::FlopsPerSecond, 1e12}},
      {"PFLOP/s", {Dim::FlopsPerSecond, 1e15}},
      {"count", {Dim::Count, 1}},
      {"fraction", {Dim::Fraction, 1}},
      {"percent", {Dim::Fraction, 0.01}},
      {"W", {Dim::Watts, 1}},
      {"Hz", {Dim::Hertz, 1}},
      {"GHz", {Dim::Hertz, 1e9}},
      {"pkt/s", {Dim::PacketsPerSecond, 1}},
      {"Mpkt/s", {Dim::PacketsPerSecond, 1e6}},
      {"Gpkt/s", {Dim::PacketsPerSecond, 1e9}},
  };
  return t;
}

inline std::optional<Unit> find_unit(const std::string& name) {
  auto it = unit_table().find(name);
  if (it == unit_table().end()) return std::nullopt;
  return it->second;
}

// Parses "40GB", "40 GiB", "100Gb/s", "2.5us" into base units of the expected dimension.
// A bare number is taken in base units.  Throws std::invalid_argument with a readable message.
inline double parse_quantity(const std::string& text, Dim expected) {
  std::size_t pos = 0;
  double value = 0;
  try {
    value = std::stod(text, &pos);
  } catch (const std::exception&) {
    throw std::invalid_argument("\"" + text + "\" is not a number with a unit");
  }
  while (pos < text.size() && std::isspace(static_cast<unsigned char>(text[pos]))) ++pos;
  std::string unit_name = text.substr(pos);
  if (!std::isfinite(value) || value < 0) throw std::invalid_argument("\"" + text + "\" must be non-negative");
  if (unit_name.empty()) return value;
  auto unit = find_unit(unit_name);
  if (!unit) throw std::invalid_argument("\"" + text + "\": unknown unit \"" + unit_name + "\"");
  if (unit->dim != expected) throw std::invalid_argument("\"" + text + "\": unit \"" + unit_name + "\" has the wrong dimension");
  return value * unit->to_base;
}

// Human-readable output with units.
inline std::string bytes(double b) {
  const char* names[] = {"B", "KB", "MB", "GB", "TB", "PB"};
  int i = 0;
  while (std::fabs(b) >= 1000 && i < 5) b /= 1000, ++i;
  return fmt::format("{:.{}f} {}", b, i == 0 ? 0 : 2, names[i]);
}
inline std::string seconds(double s) {
  if (s == 0) return "0 s";
  if (std::fabs(s) < 1e-3) return fmt::format("{:.2f} us", s * 1e6);
  if (std::fabs(s) < 1) return fmt::format("{:.2f} ms", s * 1e3);
  return fmt::format("{:.3f} s", s);
}
inline std::string flops(double f) {
  const char* names[] = {"FLOP", "KFLOP", "MFLOP", "GFLOP", "TFLOP", "PFLOP", "EFLOP"};
  int i = 0;
  while (std::fabs(f) >= 1000 && i < 6) f /= 1000, ++i;
  return fmt::format("{:.2f} {}", f, names[i]);
}
// A data rate in bits per second, as network rates are quoted ("100.00 Gb/s").
inline std::string rate(double bytes_per_s) {
  const char* names[] = {"b/s", "Kb/s", "Mb/s", "Gb/s", "Tb/s", "Pb/s", "Eb/s"};
  double b = bytes_per_s * 8;
  int i = 0;
  while (std::fabs(b) >= 1000 && i < 6) b /= 1000, ++i;
  return fmt::format("{:.2f} {}", b, names[i]);
}
inline std::string count(double n) {
  const char* names[] = {"", "K", "M", "B", "T"};
  int i = 0;
  while (std::fabs(n) >= 1000 && i < 4) n /= 1000, ++i;
  return i == 0 ? fmt::format("{:.0f}", n) : fmt::format("{:.2f}{}", n, names[i]);
}

}  // namespace luwu::units
