// PCIe, NVLink, RDMA NIC and SmartNIC models against hand-derived closed forms.
#include <doctest/doctest.h>

#include "models/models.hpp"

using namespace luwu::models;

TEST_CASE("PCIe Gen4 x16 goodput from line code and TLP overhead, by hand") {
  // 16 GT/s per lane x 16 lanes = 256 Gb/s on the wire; 128b/130b keeps 128/130 of it:
  //   256e9 * 128 / 130 / 8 = 31.5077e9 B/s per direction (the "31.5 GB/s" of the spec).
  const double raw = 16e9 * 16 * 128.0 / 130.0 / 8.0;
  // 256 B payload per TLP, 24 B TLP overhead (framing/sequence 4 + 4DW header 16 + LCRC 4) and
  // 2 B of DLLPs amortised: 256 / (256 + 26) = 0.90780.
  const double protocol = 256.0 / 282.0;
  PcieSpec gen4{4, 16, 16e9, 128.0 / 130.0, protocol, 1e-6};
  CHECK(gen4.raw_Bps_per_direction() == doctest::Approx(raw));
  CHECK(gen4.raw_Bps_per_direction() == doctest::Approx(31.5e9).epsilon(0.001));
  CHECK(gen4.achieved_Bps_per_direction() == doctest::Approx(raw * protocol));
  CHECK(gen4.achieved_Bps_per_direction() == doctest::Approx(28.603e9).epsilon(0.001));

  // The shipped profile encodes the same line code and overheads.
  PcieSpec shipped = pcie_from_profile(find_profile("pcie-gen4-x16"));
  CHECK(shipped.generation == 4);
  CHECK(shipped.lanes == 16);
  CHECK(shipped.encoding_efficiency == doctest::Approx(128.0 / 130.0));
  CHECK(shipped.protocol_efficiency == doctest::Approx(protocol));
  CHECK(shipped.achieved_Bps_per_direction() == doctest::Approx(raw * protocol));
}

TEST_CASE("PCIe Gen3 and Gen5 x16 match the published theoretical rates") {
  // hardware.md: x16 per direction, Gen3 15.75 GB/s, Gen5 63 GB/s (128b/130b).
  CHECK(pcie_from_profile(find_profile("pcie-gen3-x16")).raw_Bps_per_direction() ==
        doctest::Approx(15.75e9).epsilon(0.001));
  PcieSpec gen5 = pcie_from_profile(find_profile("pcie-gen5-x16"));
  CHECK(gen5.raw_Bps_per_direction() == doctest::Approx(63e9).epsilon(0.001));
  // The nvbandwidth example measured 55.6 GB/s host-to-device on Gen5: the protocol model must
  // leave the achievable rate above what was measured and below the wire rate.
  CHECK(gen5.achieved_Bps_per_direction() > 55.6e9);
  CHECK(gen5.achieved_Bps_per_direction() < gen5.raw_Bps_per_direction());
}

TEST_CASE("an 8b/10b link keeps 80% of its transfer rate") {
  // Gen2: 5 GT/s per lane, x8: 40 Gb/s * 8/10 / 8 = 4 GB/s.
  PcieSpec gen2{2, 8, 5e9, 8.0 / 10.0, 1.0, 0};
  CHECK(gen2.raw_Bps_per_direction() == doctest::Approx(4e9));
}

TEST_CASE("RoCEv2 goodput from MTU and per-packet headers, by hand") {
  // Per packet on the wire besides the payload: preamble+SFD 8, Ethernet 14, IPv4 20, UDP 8, BTH 12,
  // ICRC 4, FCS 4, inter-frame gap 12 = 82 B.
  const double header = 8 + 14 + 20 + 8 + 12 + 4 + 4 + 12;
  CHECK(header == 82);
  NicSpec nic = nic_from_profile(find_profile("rdma-nic-100g"));
  CHECK(nic.header_bytes == header);
  CHECK(nic.line_rate_Bps == doctest::Approx(12.5e9));
  // 4096 B MTU: 100 Gb/s * 4096 / 4178 = 98.04 Gb/s.
  CHECK(nic.goodput_Bps() == doctest::Approx(100e9 / 8 * 4096 / 4178));
  // 2048 B MTU: 100 Gb/s * 2048 / 2130 = 96.15 Gb/s.
  CHECK(nic.goodput_Bps(2048) == doctest::Approx(100e9 / 8 * 2048 / 2130));
  // Published (PMC7842203, table 2): RDMA WRITE 97.5 Gb/s at 4 KB MTU, 95.2 Gb/s at 2 KB. The wire
  // model is an upper bound that should land within about 1% of those measurements.
  CHECK(nic.goodput_Bps() * 8 > 97.5e9);
  CHECK(nic.goodput_Bps() * 8 == doctest::Approx(97.5e9).epsilon(0.01));
  CHECK(nic.goodput_Bps(2048) * 8 > 95.2e9);
  CHECK(nic.goodput_Bps(2048) * 8 == doctest::Approx(95.2e9).epsilon(0.015));
}

TEST_CASE("InfiniBand EDR goodput with its 26 B of per-packet headers") {
  // LRH 8 + BTH 12 + ICRC 4 + VCRC 2 = 26 B; 100 Gb/s data rate after 64b/66b.
  NicSpec ib = nic_from_profile(find_profile("infiniband-edr-100g"));
  CHECK(ib.goodput_Bps() == doctest::Approx(12.5e9 * 4096 / (4096 + 26)));
}

TEST_CASE("SmartNIC throughput is the least of line goodput, packet rate and processing rate") {
  SmartNicSpec s;
  s.nic = NicSpec{12.5e9, 4096, 82, 1e-6};  // 100 Gb/s
  s.packets_per_s = 10e6;                   // 10 Mpkt/s: binds for small packets
  s.processing_Bps = 10e9;                  // 80 Gb/s: binds for large packets
  // 256 B: line 12.5e9*256/338 = 9.47e9, packet rate 10e6*256 = 2.56e9, processing 10e9 -> 2.56e9.
  CHECK(s.throughput_Bps(256) == doctest::Approx(2.56e9));
  // 4096 B: line 12.5e9*4096/4178 = 12.25e9, packet rate 40.96e9, processing 10e9 -> 10e9.
  CHECK(s.throughput_Bps(4096) == doctest::Approx(10e9));
  // With ample processing, 4096 B packets run at line goodput.
  s.processing_Bps = 100e9;
  CHECK(s.throughput_Bps(4096) == doctest::Approx(12.5e9 * 4096 / 4178));
}

TEST_CASE("the shipped BlueField-2 reaches its line goodput at full-MTU packets") {
  SmartNicSpec bf2 = smartnic_from_profile(find_profile("bluefield2-200g"));
  CHECK(bf2.gpudirect);
  CHECK(bf2.memory_bytes == doctest::Approx(16e9));
  CHECK(bf2.throughput_Bps(4096) == doctest::Approx(bf2.nic.goodput_Bps()));
}

TEST_CASE("NVSwitch profiles give per-direction bandwidth per GPU") {
  // DGX-2: 300 GB/s per GPU counted over both directions -> 150 GB/s each way.
  NvlinkSpec dgx2 = nvlink_from_profile(find_profile("dgx2-nvswitch"));
  CHECK(dgx2.per_direction_Bps == doctest::Approx(150e9));
  CHECK(dgx2.gpus == 16);
}
