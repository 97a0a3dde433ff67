// The reliable transport's cost at the optimizer node (models/reliable_transport.hpp) against
// shares derived by hand.
#include <doctest/doctest.h>

#include <algorithm>

#include "models/reliable_transport.hpp"

using namespace luwu::models;

namespace {

// 100 Gb/s, 82 B of header per frame, 4096 B parameter frames, 256 B aggregation frames.
constexpr double kL = 12.5e9, kH = 82, kPout = 4096, kPin = 256;

NodeLinkLimits link(double packets_per_s) { return {kL, packets_per_s, kH, kPout, kPin}; }

// Both streams at line rate without the protocol: parameters out at the frame's goodput,
// aggregated gradients in at theirs.
constexpr double kX0 = kL * kPout / (kPout + kH), kY0 = kL * kPin / (kPin + kH);

ReliabilitySettings ack() {
  ReliabilitySettings s;
  s.protocol = ReliabilityProtocol::PerPacketAck;
  return s;
}

}  // namespace

TEST_CASE("per-packet ACK: ACK frames take the node's lines, incoming from N workers, outgoing for each aggregate") {
  // Incoming: the aggregated gradients fill the line (y0 (p_in + h) / p_in = L), and every
  // parameter frame sent brings N ACKs of 84 B: s (L + N x0 / p_out x 84) <= L.
  // Outgoing: the parameters fill the line, and the node ACKs each aggregated frame:
  // s (L + y0 / p_in x 84) <= L, which does not depend on N.
  const double out_share = 1 / (1 + kY0 / kPin * 84 / kL);
  CHECK(out_share == doctest::Approx(0.8009).epsilon(1e-3));
  for (int n : {1, 8, 32, 63}) {
    CAPTURE(n);
    const double in_share = 1 / (1 + n * (kX0 / kL) * 84 / kPout);
    CHECK(reliable_share(link(148.8e6), ack(), n, kX0, kY0) == doctest::Approx(std::min(in_share, out_share)).epsilon(1e-12));
  }
  // Past 12 workers the incoming ACKs bind: 32 workers, 1 / (1 + 32 x 0.98037 x 0.020508) = 0.6085.
  CHECK(reliable_share(link(148.8e6), ack(), 32, kX0, kY0) == doctest::Approx(0.6085).epsilon(1e-3));
}

TEST_CASE("per-packet ACK: with a slow NIC the packet rate binds, s = R / (y0 / p_in + N x0 / p_out)") {
  const double R = 40e6;
  const int n = 8;
  const double expected = R / (kY0 / kPin + n * kX0 / kPout);
  REQUIRE(expected < 1 / (1 + n * (kX0 / kL) * 84 / kPout));  // below the line's bound
  CHECK(reliable_share(link(R), ack(), n, kX0, kY0) == doctest::Approx(expected).epsilon(1e-12));
}

TEST_CASE("heartbeats: one control frame per interval each way, whatever the worker count") {
  ReliabilitySettings hb;
  hb.heartbeat_interval_s = 10e-6;
  // Incoming (and outgoing): s L + 84 / 10 us <= L, so s = 1 - 84 / (1e-5 x 12.5e9) = 0.999328.
  const double expected = 1 - 84 / (10e-6 * kL);
  for (int n : {1, 8, 63}) CHECK(reliable_share(link(148.8e6), hb, n, kX0, kY0) == doctest::Approx(expected).epsilon(1e-12));
}

TEST_CASE("forward: parameters alone, the ACKs are all that come in") {
  // In: only N x / p_out ACK frames, 84 B each: s N (x0 / p_out) 84 <= L and s N x0 / p_out <= R;
  // out: s x0 (p_out + h) / p_out = s L <= L.
  for (int n : {8, 63}) {
    CAPTURE(n);
    const double acks_per_s = n * kX0 / kPout;
    const double expected = std::min({1.0, kL / (acks_per_s * 84), 148.8e6 / acks_per_s});
    CHECK(reliable_share(link(148.8e6), ack(), n, kX0, 0) == doctest::Approx(expected).epsilon(1e-12));
  }
  // 63 workers: 188.5 M ACKs/s, over the 148.8 Mpkt/s the NIC handles: 0.7894.
  CHECK(reliable_share(link(148.8e6), ack(), 63, kX0, 0) == doctest::Approx(0.7894).epsilon(1e-3));
  CHECK(reliable_share(link(148.8e6), ack(), 8, kX0, 0) == 1);
}
