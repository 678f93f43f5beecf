// src/analysis/parallel_detail.h — what the files of the parallel analysis share (parallel.cc,
// parallel_comm.cc, parallel_time.cc): a node's share on one rank, pipeline stages, bytes per parameter.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "flopwise/parallel.h"

namespace flopwise::parallel_detail {

inline int64_t ceil_div(int64_t a, int64_t b) { return b <= 1 ? a : (a + b - 1) / b; }

// One node's share on one rank, per micro-batch.
struct NodeShare {
  std::string unit;    // its layer (the first numbered scope, "h.3"), else its outermost scope
  bool layer = false;  // unit is a numbered scope (a layer of a stack)
  int64_t params = 0, fwd_macs = 0, fwd_flops = 0, bwd_macs = 0, bwd_flops = 0;
  int64_t saved = 0;            // bytes kept for its backward
  int64_t keep_div = 1;         // what its kept bytes were divided by
  int64_t recompute_flops = 0;  // forward work run again in the backward (selective recompute)
};

struct Stage {
  size_t begin = 0, end = 0;  // node range
};

// Bytes a parameter takes as a weight and as a gradient, and the optimizer's K (training's figures).
struct Bytes {
  int64_t weight = 4, grad = 4, k = 8;
};
Bytes bytes_per_param(const TrainingReport& t, const Report& r);

// Bytes an element of v takes in the step: a float32 tensor is 16-bit under the mixed and master precisions.
int64_t act_bytes(const Value& v, Precision p);

std::vector<NodeShare> node_shares(const Model& model, const AnalysedReport& report,
                                   const TrainingReport& training, const ParallelConfig& cfg,
                                   const TpPlan& plan);
void selective_recompute(const Model& model, std::vector<NodeShare>& shares, Precision p);
int64_t largest_unit_params(const std::vector<NodeShare>& shares);

// Every collective of the step, per rank (parallel_comm.cc).
std::vector<Collective> collectives(const Model& model, const AnalysedReport& report,
                                    const ParallelConfig& cfg, const TpPlan& plan,
                                    const std::vector<NodeShare>& shares, const std::vector<Stage>& stages,
                                    Precision p, const Bytes& per);

// A node's roofline seconds on one rank, forward (parallel_time.cc): its bound scaled by its share.
double node_seconds(const Report& report, size_t i, const Hardware& hw, const NodeShare& s);
StepTime step_time(const ParallelReport& p, const Hardware& hw);

}  // namespace flopwise::parallel_detail
