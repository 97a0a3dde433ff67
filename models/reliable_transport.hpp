#pragma once
// How LuWu's optimizer node learns what its peers received, and what that costs its NIC (the LuWu
// paper, "Switch and protocol"):
//  - per-packet acknowledgement: every worker acknowledges each packet the node multicasts, and
//    the node acknowledges each aggregated packet it receives, so N ACK frames come in for every
//    data packet the node sends to N workers;
//  - switch-aggregated heartbeats (LuWu's design): every endpoint sends a heartbeat (Ack, Credit)
//    every `heartbeat_interval_s`; the switch keeps the workers' latest and sends the node their
//    minimum, and broadcasts the node's: one control frame per interval each way, whatever N.
// Per direction the node's NIC carries data frames (payload p, `header_bytes` more on the wire)
// and c control frames per second (`control_frame_bytes` each on the wire) within its line rate L
// and its packet rate R:
//     x (p + h) / p + c A <= L          x / p + c <= R
// The node sends parameters at x (payload p_out) and receives aggregated gradients at y (payload
// p_in, the switch's packet); per-packet ACK: c_in = N x / p_out, c_out = y / p_in; heartbeats:
// c_in = c_out = 1 / T.  Without the protocol the node would move x0 out and y0 in (its links' and
// the aggregation's rates); the protocol leaves the share s <= 1 of both, the largest s for which
// (s x0, s y0) meets all four bounds (forward: the parameters alone, y0 = 0).
#include <algorithm>
#include <limits>

namespace luwu::models {

enum class ReliabilityProtocol { PerPacketAck, SwitchHeartbeats };

struct ReliabilitySettings {
  ReliabilityProtocol protocol = ReliabilityProtocol::SwitchHeartbeats;
  // A minimum Ethernet frame, 64 B, plus preamble/SFD 8 B and inter-frame gap 12 B (IEEE 802.3):
  // an ACK or a heartbeat carries a few sequence numbers, well under the minimum payload.
  double control_frame_bytes = 84;
  // The paper gives the resend timeout (e.g. 1 s) but not the heartbeat period: a project
  // assumption, a few round trips, so the credit window moves often.
  double heartbeat_interval_s = 10e-6;
};

// The node's NIC, per direction.
struct NodeLinkLimits {
  double line_rate_Bps = 0;
  double packets_per_s = std::numeric_limits<double>::infinity();  // unknown for a plain NIC: no bound
  double header_bytes = 0;       // per data frame on the wire
  double out_payload_bytes = 0;  // per frame the node sends (parameters)
  double in_payload_bytes = 0;   // per frame it receives (aggregated gradients)
};

// The share s in [0, 1] of the node's data rates (x0 out, y0 in, bytes/s of payload) that the
// protocol leaves with `workers` workers.
inline double reliable_share(const NodeLinkLimits& link, const ReliabilitySettings& settings, int workers,
                             double x0_Bps, double y0_Bps) {
  const bool ack = settings.protocol == ReliabilityProtocol::PerPacketAck;
  const double A = settings.control_frame_bytes;
  const double h = link.header_bytes;
  // Per unit of s: data bytes and frames out and in, and the control frames each way.
  const double out_frames = x0_Bps / link.out_payload_bytes;
  const double in_frames = y0_Bps > 0 ? y0_Bps / link.in_payload_bytes : 0;
  const double out_bytes = out_frames * (link.out_payload_bytes + h);
  const double in_bytes = in_frames * (link.in_payload_bytes + h);
  const double heartbeats = 1 / settings.heartbeat_interval_s;
  // Control frames: those that scale with s (ACKs) and those that do not (heartbeats).
  const double ctl_out_per_s = ack ? in_frames : 0, ctl_out_fixed = ack ? 0 : heartbeats;
  const double ctl_in_per_s = ack ? workers * out_frames : 0, ctl_in_fixed = ack ? 0 : heartbeats;
  double s = 1;
  // a s + b <= limit, for each bound.
  auto bound = [&s](double a, double b, double limit) {
    if (a > 0) s = std::min(s, (limit - b) / a);
    else if (b > limit) s = 0;
  };
  bound(out_bytes + ctl_out_per_s * A, ctl_out_fixed * A, link.line_rate_Bps);
  bound(in_bytes + ctl_in_per_s * A, ctl_in_fixed * A, link.line_rate_Bps);
  bound(out_frames + ctl_out_per_s, ctl_out_fixed, link.packets_per_s);
  bound(in_frames + ctl_in_per_s, ctl_in_fixed, link.packets_per_s);
  return std::max(0.0, s);
}

}  // namespace luwu::models
