#pragma once
// Streaming DiLoCo (Douillard et al., "Streaming DiLoCo with overlapping communication: Towards a
// Distributed Free Lunch", arXiv 2501.18512): M groups of GPUs (datacenters, e.g. the `wan`
// topology's groups) each train their own replica with data parallelism for H inner steps; the
// model's P fragments are synchronized across the groups in turn, fragment p at inner step
// offset t_p = p H / P of every H-step round, by an all-reduce of its outer gradient (the change
// since the last synchronization) quantized to a few bits, overlapped with tau inner steps.
// docs/baselines.md, "Streaming DiLoCo", says what one simulated iteration stands for.
#include "sim/systems/system.hpp"

namespace luwu::sim {

struct StreamingDilocoSettings {
  // M: the groups (DiLoCo "workers", replicas), each a contiguous block of world / M ranks (the
  // `wan` builder numbers ranks group by group).  The paper's main experiments use M = 2.
  int groups = 2;
  // H: inner steps between two synchronizations of the same fragment.  The paper's H = 100.
  int inner_steps = 100;
  // P: fragments, synchronized one every H / P inner steps (strided layers in the paper; here
  // equal shares of the parameters).  20 with H = 100: a fragment every 5 steps, as in the paper's
  // streaming setting.
  int fragments = 20;
  // tau: inner steps a fragment's synchronization may overlap before its result is merged.  The
  // paper's experiments use tau = 1 to 5; 1 (the least overlap) by default.
  int overlap_steps = 1;
  // Bits per element of the outer gradient on the wire: 4 (the paper's E3M0 FP4 outer gradients;
  // the accumulation stays in fp32).
  int outer_gradient_bits = 4;
  // Inside each group, DDP's bucketed all-reduce (PyTorch DDP's 25 MB default).
  double bucket_bytes = 25e6;
  CollectiveSettings collectives;
};

SystemPtr parse_streaming_diloco(const SystemEntry& entry);

// The closed forms the result's details carry (bytes per group over the WAN, each direction, for
// a ring all-reduce across M groups): per fragment 2 (M-1)/M x (params / P) x bits / 8.
double streaming_diloco_fragment_wan_bytes(double params, const StreamingDilocoSettings& s);

}  // namespace luwu::sim
