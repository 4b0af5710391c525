// The ring algorithm's latency steps and bandwidth factor of each collective kind, as functions
// of the rank count p (Thakur, Rabenseifner & Gropp 2005). The bandwidth factor is nccl-tests'
// busbw factor (doc/PERFORMANCE.md), so the cost model's table (collective.cpp) and calib's GPU
// programs (calib/gpu/nccl_*.cu) both take it from here. Header-only and constexpr, with no
// autoddl library behind it: the GPU programs link only CUDA and header-only libraries.
#pragma once

namespace autoddl::costmodel::collective_factors {

// all_reduce: 2(p−1) steps, each rank moves 2(p−1)/p of S.
constexpr double ar_steps(int p) { return 2.0 * (p - 1); }
constexpr double ar_factor(int p) { return p > 0 ? 2.0 * (p - 1) / p : 0.0; }
// all_gather, reduce_scatter, all_to_all: p−1 steps, (p−1)/p of S.
constexpr double ring_steps(int p) { return p - 1.0; }
constexpr double ring_factor(int p) { return p > 0 ? (p - 1.0) / p : 0.0; }
// send_recv: one step, all of S.
constexpr double one(int /*p*/) { return 1.0; }

}  // namespace autoddl::costmodel::collective_factors
