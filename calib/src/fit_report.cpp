// The tables `autoddl fit` prints (see fit.hpp): one row per collective band, one per
// efficiency table, one per HBM kernel. Bandwidths in GB/s (1e9 bytes), like nccl-tests.
#include <cstdio>
#include <string>

#include "autoddl/calib/fit.hpp"
#include "autoddl/costmodel/bytes_text.hpp"

namespace autoddl::calib {

namespace {

std::string percent(const std::optional<double>& x) {
  if (!x) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", *x * 100);
  return buf;
}

void append(std::string& out, const char* fmt, auto... args) {
  char buf[512];
  std::snprintf(buf, sizeof buf, fmt, args...);
  out += buf;
}

// One line per group shape left out of its tier's fit.
void append_holdout(std::string& out, const std::vector<ShapeHoldout>& holdout) {
  for (const ShapeHoldout& h : holdout) {
    append(out, "  held out %s over %d ranks, %d per node, %d groups per node: %.2f %%\n",
           std::string(costmodel::collective_info(h.kind).name).c_str(), h.group.ranks, h.group.ranks_per_node,
           h.groups_per_node, h.rel_error * 100);
  }
}

}  // namespace

std::string format_fit_report(const FitResult& r) {
  std::string out;
  if (!r.collectives.empty()) {
    append(out, "%-15s %6s %8s %6s %11s %6s %9s %9s %9s %8s %9s %9s %9s\n", "collective", "ranks",
           "per_node", "groups", "from", "points", "alpha", "algbw", "busbw", "R2", "max_err",
           "held-out", "interp");
    append(out, "%-15s %6s %8s %6s %11s %6s %9s %9s %9s %8s %9s %9s %9s\n", "", "", "", "/node",
           "(B)", "", "(us)", "(GB/s)", "(GB/s)", "", "(%)", "(%)", "(%)");
    for (const CollectiveFitRow& c : r.collectives) {
      double factor = costmodel::collective_info(c.kind).bw_factor(c.group.ranks);
      for (size_t b = 0; b < c.fit.bands.size(); ++b) {
        const costmodel::AlphaBetaBand& band = c.fit.bands[b];
        double algbw = band.beta_s_per_byte > 0 ? 1e-9 / band.beta_s_per_byte : 0;
        append(out, "%-15s %6d %8d %6d %11s %6d %9.2f %9.2f %9.2f %8.4f %9.2f %9s %9s\n",
               std::string(costmodel::collective_info(c.kind).name).c_str(), c.group.ranks,
               c.group.ranks_per_node, c.groups_per_node, costmodel::bytes_text(band.from_bytes).c_str(), band.fit->points,
               band.alpha_s * 1e6, algbw, algbw * factor, band.fit->r2,
               band.fit->max_rel_error * 100, percent(band.fit->holdout_rel_error).c_str(),
               b == 0 ? percent(c.fit.holdout_interp_rel_error).c_str() : "");
      }
    }
  }
  if (!r.link_tiers.empty()) {
    // Fixed cost, per-step α and ring bandwidth 1/β; held-out: each shape left out in turn.
    if (!out.empty()) out += "\n";
    append(out, "%-10s %8s %6s %6s %9s %9s %10s %9s %9s\n", "link tier", "per_node", "groups",
           "shapes", "fixed", "alpha", "bandwidth", "mean_err", "held-out");
    append(out, "%-10s %8s %6s %6s %9s %9s %10s %9s %9s\n", "", "", "/node", "", "(us)", "(us/step)",
           "(GB/s)", "(%)", "(%)");
    for (const LinkTierFitRow& t : r.link_tiers) {
      const costmodel::LinkTierCalibration& c = t.tier;
      append(out, "%-10s %8s %6d %6d %9.2f %9.2f %10.2f %9.2f %9s\n", c.inter_node ? "inter-node" : "intra-node",
             c.inter_node ? std::to_string(c.ranks_per_node).c_str() : "all", c.groups_per_node, c.shapes,
             c.fixed_s * 1e6, c.alpha_s * 1e6, c.beta_s_per_byte > 0 ? 1e-9 / c.beta_s_per_byte : 0.0, c.mean_rel_error * 100,
             percent(c.holdout_rel_error).c_str());
      append_holdout(out, t.holdout);
    }
  }
  if (!r.nccl_model.empty()) {
    // NCCL's model with per-tier bandwidth efficiency and latency offset; held-out as above.
    if (!out.empty()) out += "\n";
    append(out, "%-10s %8s %6s %6s %6s %10s %9s %9s %9s %9s\n", "nccl model", "per_node", "groups", "shapes",
           "points", "logged", "bw_eff", "latency", "mean_err", "held-out");
    append(out, "%-10s %8s %6s %6s %6s %10s %9s %9s %9s %9s\n", "", "", "/node", "", "", "algo/proto", "", "+(us)",
           "(%)", "(%)");
    for (const NcclModelFitRow& t : r.nccl_model) {
      const costmodel::NcclModelCalibration& c = t.tier;
      append(out, "%-10s %8s %6d %6d %6d %10d %9.3f %9.2f %9.2f %9s\n", c.inter_node ? "inter-node" : "intra-node",
             c.inter_node ? std::to_string(c.ranks_per_node).c_str() : "all", c.groups_per_node, c.shapes, c.points,
             c.attributed_points,
             c.bw_efficiency, c.latency_offset_s * 1e6, c.mean_rel_error * 100, percent(c.holdout_rel_error).c_str());
      for (int p = 0; p < costmodel::kNcclProtoCount; ++p) {
        const costmodel::NcclModelCalibration::Protocol& tp = c.protocols[size_t(p)];
        if (!tp.fitted) continue;
        append(out, "  %-8s %8s %6s %6s %6d %10s %9.3f %9.2f\n",
               std::string(costmodel::nccl_proto_name(costmodel::NcclProto(p))).c_str(), "", "", "", tp.points, "",
               tp.bw_efficiency, tp.latency_offset_s * 1e6);
      }
      append_holdout(out, t.holdout);
    }
  }
  if (!r.efficiency.empty()) {
    if (!out.empty()) out += "\n";
    append(out, "%-7s %5s %7s %10s %-15s %8s %8s %10s %9s\n", "kernel", "dtype", "shapes", "peak",
           "peak_from", "eff_min", "eff_max", "train_mape", "held-out");
    append(out, "%-7s %5s %7s %10s %-15s %8s %8s %10s %9s\n", "", "", "", "(TFLOP/s)", "", "", "",
           "(%)", "(%)");
    for (const EfficiencyFitRow& e : r.efficiency) {
      double lo = 1, hi = 0;
      for (const costmodel::EfficiencyPoint& p : e.fit.points) {
        lo = std::min(lo, p.efficiency);
        hi = std::max(hi, p.efficiency);
      }
      append(out, "%-7s %5s %7d %10.1f %-15s %8.3f %8.3f %10.2f %9s\n", e.op.c_str(),
             std::string(costmodel::dtype_name(e.dtype)).c_str(), e.fit.shapes,
             e.peak_flops_per_s / 1e12, e.peak_source.c_str(), lo, hi, e.fit.train_mape * 100,
             percent(e.fit.holdout_mape).c_str());
    }
  }
  if (!r.hbm.empty() || r.launch_overhead_s) {
    if (!out.empty()) out += "\n";
    for (size_t i = 0; i < r.hbm.size(); ++i) {
      const HbmFitRow& h = r.hbm[i];
      append(out, "memory %-7s %9.1f GB/s  fixed %7.2f us  R2 %.4f  max_err %.2f %%%s\n",
             h.kernel.c_str(), h.fit.bytes_per_s / 1e9, h.fit.fixed_s * 1e6, h.fit.quality.r2,
             h.fit.quality.max_rel_error * 100, i == 0 ? "  (stored as hbm_bytes_per_s)" : "");
    }
    if (r.launch_overhead_s) {
      append(out, "launch overhead %.2f us\n", *r.launch_overhead_s * 1e6);
    }
  }
  for (const std::string& n : r.notes) out += "note: " + n + "\n";
  return out;
}

std::string fit_report_legend(const FitResult& r) {
  std::string out = "\nwhat the columns mean:\n";
  if (!r.collectives.empty()) {
    out +=
        "  collectives: one row per alpha-beta size band of one (collective, group shape); ranks, per_node and\n"
        "    groups/node are the group's ranks, its ranks on one node, and the groups run at once with ranks on\n"
        "    one node (they share its NICs); the cost model uses a row only for a mesh dim of exactly that shape.\n"
        "    from: the band's first size (nccl-tests size S); points: sizes fitted; alpha: the band's fixed time;\n"
        "    algbw = S / time and busbw = algbw x the collective's factor (nccl-tests' columns) of its slope;\n"
        "    R2, max_err: how well the line fits its points (1/t^2-weighted, relative); held-out: mean |error|\n"
        "    of the bands refitted without every K-th size (--holdout K) on those sizes; interp: the same for\n"
        "    log-size interpolation of the measured table, which is what the cost model reads inside the\n"
        "    measured sizes (bands only outside them, or with --no-measured-tables).\n";
  }
  if (!r.link_tiers.empty()) {
    out +=
        "  link tier: one ring model (fixed + steps x alpha + bytes on the wire / bandwidth) per tier, fitted over\n"
        "    all measured shapes of it, for group shapes never measured; shapes: group shapes behind it;\n"
        "    mean_err: on its points; held-out: mean |error| of each shape when left out of the fit.\n";
  }
  if (!r.nccl_model.empty()) {
    out +=
        "  nccl model: NCCL's own tuning model (algorithms, protocols, channels) with two numbers fitted per\n"
        "    tier: bw_eff multiplies every bandwidth of NCCL's table (1 = NCCL's numbers; 0.8 = the links give\n"
        "    80% of them), latency +(us) is added to every latency; logged: sizes whose NCCL debug log named the\n"
        "    algorithm and protocol (the rest use the model's own pick); mean_err and held-out as above.\n";
  }
  if (!r.efficiency.empty()) {
    out +=
        "  kernel: fraction of the peak FLOP/s a GEMM or convolution reaches, interpolated by FLOPs; eff_min,\n"
        "    eff_max: the range over measured shapes; train_mape: mean |time error| on fitted shapes;\n"
        "    held-out: the same on every K-th shape left out.\n";
  }
  if (!r.hbm.empty()) {
    out += "  memory: a streaming kernel's time = fixed + bytes / bandwidth; the first row is stored.\n";
  }
  return out;
}

}  // namespace autoddl::calib
