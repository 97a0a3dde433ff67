#pragma once
// A network switch.  A programmable one (Tofino-class) aggregates in the network (SwitchML-style)
// and multicasts; a conventional one (e.g. Mellanox SN2700) only forwards: ports, port rate and
// latency, `aggregates` false.
// Aggregation: each packet carries elements_per_packet elements of element_bytes; the switch has a
// pool of aggregation_slots slots; every worker keeps at most one packet in flight per slot
// (self-clocked), so each worker sends at most slots * payload bytes per round trip:
//   aggregation_throughput = min(line_rate, slots * payload / rtt)                 per worker
// and, with the switch's packet-processing limit shared by the N workers' packets,
//   aggregation_throughput = min(line_rate, slots * payload / rtt, aggregation_packets_per_s * payload / N)
#include "models/profile.hpp"

namespace luwu::models {

struct SwitchSpec {
  int ports = 0;
  double port_Bps = 0;                    // per port, per direction
  bool aggregates = false;                // the profile has the aggregation fields (else a conventional
                                          // switch: the aggregation fields below stay 0)
  double aggregation_slots = 0;           // pool size s
  double elements_per_packet = 0;         // k
  double element_bytes = 0;               // e.g. 4 (int32 fixed point)
  double aggregation_packets_per_s = 0;   // packets the aggregation pipeline can process, switch-wide
  double pipeline_latency_s = 0;          // port to port
  double sram_bytes = 0;
  bool multicast = false;

  double payload_bytes() const { return elements_per_packet * element_bytes; }
  // Per-worker payload bytes/s of aggregation: min(line_rate_Bps, slots * payload / rtt_s).
  // line_rate_Bps is the worker link's payload goodput at this packet size.
  double aggregation_throughput_Bps(double rtt_s, double line_rate_Bps) const;
  // The same, also bounded by the pipeline's packet rate shared by `workers` senders.
  double aggregation_throughput_Bps(double rtt_s, double line_rate_Bps, int workers) const;
  // SRAM the slot pool needs: slots * payload (one accumulator per element per slot).
  double slot_pool_bytes() const { return aggregation_slots * payload_bytes(); }
};

SwitchSpec switch_from_profile(const Profile& profile);  // kind "switch"

}  // namespace luwu::models
