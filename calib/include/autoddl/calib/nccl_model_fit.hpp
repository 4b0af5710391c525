// Fits NCCL's cost model (costmodel/cluster/src/nccl_model.cpp, a transcription of NCCL's tuner)
// to measured all-reduce, all-gather and reduce-scatter sizes: per tier (intra-node; inter-node
// per (ranks per node, groups per node)) a bandwidth efficiency η that multiplies every (algorithm, protocol) bandwidth and
// a latency offset δ added to every latency (costmodel::NcclModelCalibration), keeping NCCL's
// structure, constants and choice of the fastest (algorithm, protocol). Where NCCL's log named the
// algorithm and protocol of a size (the measurement rows' nccl_algo/nccl_proto), that size is
// priced with that pair; otherwise with the pair the fitted model itself picks, among those the
// run's NCCL_ALGO / NCCL_PROTO allowed (NcclRestriction) when the logs were run with them.
//
// For a fixed pair per point, NCCL's time is linear in (δ, 1/η): t = L + c·δ + x/η, with L, c and
// x read off NCCL's model at (δ, η) = (0, 1), (1 us, 1) and (0, 1/2) (c is 1, or 1.4 where NCCL
// scales the ring/Simple latency); least squares on relative error (Eigen QR), then the model's
// own picks are updated and the fit repeated until they no longer change.
#pragma once
#include <optional>
#include <vector>

#include "autoddl/calib/link_tier_fit.hpp"
#include "autoddl/costmodel/calibration.hpp"
#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/nccl_model.hpp"

namespace autoddl::calib {

struct NcclModelFitRow {
  costmodel::NcclModelCalibration tier;
  std::vector<ShapeHoldout> holdout;  // empty when the tier has a single shape
  int unusable_choices = 0;           // logged pairs NCCL's model does not offer here (priced by its own pick)
};

// The NCCL_ALGO / NCCL_PROTO the measured runs were made with (empty: NCCL chose freely).
using costmodel::NcclRestriction;

// `c` must have an nccl block (throws InputError otherwise). Shapes of other kinds or of one rank
// are left out. Tiers come intra-node first, then inter-node by ranks per node, groups per node.
// Throws InputError("--nccl-algo" or "--nccl-proto", ...) when `only` allows nothing NCCL's model
// offers for a measured shape. With `per_protocol`, after the tier's (η, δ) each protocol with
// at least two points of the tier (by the fitted model's pick) gets its own (η, δ) the same way
// (NcclModelCalibration::protocols); the others keep the tier's.
std::vector<NcclModelFitRow> fit_nccl_model(const costmodel::ClusterSpec& c, const std::vector<ShapePoints>& shapes,
                                            const NcclRestriction& only = {}, bool per_protocol = false);

// The basis the tiers were fitted against (for Calibration::nccl_basis).
costmodel::NcclModelBasis nccl_model_basis(const costmodel::ClusterSpec& c);

}  // namespace autoddl::calib
