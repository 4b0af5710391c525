// Per-rank validation programs (see validation_plan.hpp). The walk mirrors
// costmodel/src/cost_model.cpp step for step (micro-batch shapes, boxing per edge and
// parameter, the first-reader rule for summed gradients, cross-stage send/recv, DDP buckets
// by readiness, the optimizer step); tests/calib/validation_plan_test.cpp checks that the
// steps add up to evaluate()'s CostReport, so the two cannot drift apart unnoticed.
// Order: one global sequence (no pipeline: per micro-batch forward then backward; pipeline:
// GPipe, all forwards then all backwards) that every rank's list is a subsequence of, so
// collectives and send/recv pairs meet in the same order on every rank (no deadlock).
#include "autoddl/calib/validation_plan.hpp"

#include <algorithm>
#include <cstdio>
#include <map>

#include "autoddl/costmodel/boxing.hpp"
#include "autoddl/costmodel/compute.hpp"
#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/mesh.hpp"
#include "autoddl/costmodel/op_registry.hpp"

namespace autoddl::calib {

using namespace costmodel;

namespace {

bool float_dtype(DType t) { return t == DType::fp32 || t == DType::fp16 || t == DType::bf16; }

// costmodel's rules: which inputs get a gradient (ops/helpers.cpp), which tensors are
// differentiable for boxing (cost_model.cpp).
bool needs_grad(const Tensor& t) { return t.role != TensorRole::input && float_dtype(t.dtype); }
bool differentiable(const Tensor& t) {
  return t.dtype != DType::int32 && t.dtype != DType::int64 && t.role != TensorRole::input;
}

int64_t product(const Shape& s, size_t begin, size_t end) {
  int64_t p = 1;
  for (size_t i = begin; i < end && i < s.size(); ++i) p *= s[i];
  return p;
}

Shape local_shape(const Shape& s, const NdSbp& sbp, const int* mesh) {
  Shape l = s;
  for (size_t a = 0; a < l.size(); ++a) l[a] /= split_factor(sbp, mesh, static_cast<int>(a));
  return l;
}

PlanStep gemm_step(const std::string& what, DType dt, int64_t m, int64_t n, int64_t k, int64_t batch,
                   double bytes) {
  PlanStep s;
  s.kind = StepKind::gemm;
  s.what = what;
  s.dtype = std::string(dtype_name(dt));
  s.m = m, s.n = n, s.k = k, s.batch = batch;
  s.flops = 2.0 * double(batch) * double(m) * double(n) * double(k);
  s.bytes = bytes;
  return s;
}

PlanStep memory_step(const std::string& what, DType dt, double flops, double bytes, int kernels) {
  PlanStep s;
  s.kind = StepKind::memory;
  s.what = what;
  s.dtype = std::string(dtype_name(dt));
  s.flops = flops;
  s.bytes = bytes;
  s.kernels = kernels;
  return s;
}

// The GEMMs of one matmul or conv on this rank's local shapes: forward, then dgrad and wgrad
// for the inputs that need a gradient.
void gemm_steps(const Graph& g, const Op& op, const OpSignature& sig, const std::vector<Shape>& shape_mb,
                const int* mesh, DType dt, std::vector<PlanStep>& fwd, std::vector<PlanStep>& bwd) {
  const double e = static_cast<double>(dtype_bytes(dt));
  const bool grad_a = needs_grad(g.tensors[op.inputs[0]]);
  const bool grad_b = needs_grad(g.tensors[op.inputs[1]]);
  if (op.kind == OpKind::matmul) {
    Shape a = local_shape(shape_mb[op.inputs[0]], sig.in[0], mesh);
    Shape b = local_shape(shape_mb[op.inputs[1]], sig.in[1], mesh);
    const size_t rb = b.size();
    const int64_t k = a.back(), n = op.attrs.transpose_b ? b[rb - 2] : b[rb - 1];
    int64_t batch = 1, m = product(a, 0, a.size() - 1);  // a 2-D B folds A's batch dims into M
    if (rb > 2) batch = product(a, 0, a.size() - 2), m = a[a.size() - 2];
    const double bytes = e * double(batch) * double(m * k + k * n + m * n);
    fwd.push_back(gemm_step("fwd", dt, m, n, k, batch, bytes));
    if (grad_a) bwd.push_back(gemm_step("dgrad", dt, m, k, n, batch, bytes));   // dA = dC·Bᵀ
    if (grad_b) bwd.push_back(gemm_step("wgrad", dt, k, n, m, batch, bytes));   // dB = Aᵀ·dC
    return;
  }
  // conv2d as an implicit GEMM: M = N·P·Q output pixels, N = K filters, K = C·R·S.
  Shape x = local_shape(shape_mb[op.inputs[0]], sig.in[0], mesh);
  Shape w = local_shape(shape_mb[op.inputs[1]], sig.in[1], mesh);
  Shape y = local_shape(shape_mb[op.outputs[0]], sig.out[0], mesh);
  ConvGeometry c{x[0], x[1], x[2], x[3], w[0], w[2], w[3], y[2], y[3], op.attrs.stride, op.attrs.pad};
  const int64_t pix = c.n * c.p * c.q, crs = c.c * c.r * c.s;
  const double bytes = e * double(c.n * c.c * c.h * c.w + c.k * crs + pix * c.k);
  PlanStep f = gemm_step("fwd", dt, pix, c.k, crs, 1, bytes);
  f.conv = c;
  fwd.push_back(f);
  if (grad_a) {
    PlanStep d = gemm_step("dgrad", dt, pix, crs, c.k, 1, bytes);
    d.conv = c;
    bwd.push_back(d);
  }
  if (grad_b) {
    PlanStep d = gemm_step("wgrad", dt, c.k, crs, pix, 1, bytes);
    d.conv = c;
    bwd.push_back(d);
  }
}

// A step in the global order: compute or a collective on every rank of `stage`, or a
// send/recv pair from the ranks of `stage` to those of `to_stage`.
struct Event {
  enum Type { compute, collective, p2p } type = compute;
  int stage = 0, to_stage = 0;
  int sbp_dim = 0;
  PlanStep step;
};

// One parameter gradient waiting for sync (cost_model.cpp's GradSync).
struct GradSync {
  int tensor, op, from, to;
  const BoxingTable* table;
  double bytes, ready_s;
};

}  // namespace

PlanBuild make_validation_plan(const Graph& graph, const ClusterSpec& cluster, const Scheme& scheme) {
  PlanBuild out;
  out.report = evaluate(graph, cluster, scheme);  // validates the scheme against graph and mesh
  const CostReport& rep = out.report;
  const int n_ops = static_cast<int>(graph.ops.size());
  const int n_tensors = static_cast<int>(graph.tensors.size());
  const int m = scheme.micro_batches;
  const DeviceMesh mesh = make_mesh(cluster, scheme.mesh_shape, "scheme mesh");
  const int S = scheme.stages();
  DeviceMesh sbp_mesh;
  sbp_mesh.calibration = mesh.calibration;
  LinkTier pp_tier;
  std::vector<int> sbp_to_full;
  for (int d = 0; d < mesh.ndims(); ++d) {
    if (d == scheme.pipeline_dim) {
      pp_tier = mesh.dims[d].tier;
    } else {
      sbp_mesh.dims.push_back(mesh.dims[d]);
      sbp_to_full.push_back(d);
    }
  }
  if (sbp_mesh.dims.empty()) {
    sbp_mesh.dims.push_back(MeshDim{});
    sbp_to_full.push_back(-1);
  }
  const std::vector<int> sbp_shape = sbp_mesh.shape();
  const int* ms = sbp_shape.data();
  auto stage_of = [&](int op) { return scheme.op_chunk.empty() ? 0 : scheme.op_chunk[op] % S; };

  // ---- ranks, coordinates, groups ----
  ValidationPlan& plan = out.plan;
  plan.model = graph.name;
  plan.cluster = cluster.name;
  plan.scheme = scheme.name;
  plan.gpu = cluster.gpu.name;
  plan.mesh_shape = scheme.mesh_shape;
  plan.pipeline_dim = scheme.pipeline_dim;
  plan.stages = S;
  plan.micro_batches = m;
  plan.iteration_s = rep.iteration_s;
  plan.compute_s = rep.compute_s;
  plan.comm_exposed_s = rep.comm_exposed_s;
  plan.grad_sync_s = rep.grad_sync_s;
  plan.bubble_s = rep.bubble_s;
  for (const CollectiveInfo& k : collective_kinds()) {
    plan.count_by_kind.emplace_back(std::string(k.name), rep.comm.count[static_cast<size_t>(k.kind)]);
  }
  const int world = mesh.devices();
  const int full_nd = static_cast<int>(scheme.mesh_shape.size());
  std::vector<int> stride(full_nd, 1);
  for (int d = full_nd - 2; d >= 0; --d) stride[d] = stride[d + 1] * scheme.mesh_shape[d + 1];
  std::vector<std::vector<int>> stage_ranks(S);
  for (int r = 0; r < world; ++r) {
    RankProgram rp;
    rp.rank = r;
    for (int d = 0; d < full_nd; ++d) rp.coords.push_back(r / stride[d] % scheme.mesh_shape[d]);
    rp.stage = scheme.pipeline_dim < 0 ? 0 : rp.coords[scheme.pipeline_dim];
    stage_ranks[rp.stage].push_back(r);
    plan.ranks.push_back(std::move(rp));
  }
  std::map<std::pair<int, std::vector<int>>, int> group_ids;
  auto group_of = [&](int rank, int full_dim) {
    std::vector<int> members;
    const int base = rank - plan.ranks[rank].coords[full_dim] * stride[full_dim];
    for (int c = 0; c < scheme.mesh_shape[full_dim]; ++c) members.push_back(base + c * stride[full_dim]);
    auto [it, fresh] = group_ids.try_emplace({full_dim, members}, static_cast<int>(plan.groups.size()));
    if (fresh) plan.groups.push_back({full_dim, members});
    return it->second;
  };
  auto peer_in_stage = [&](int rank, int stage) {
    return rank + (stage - plan.ranks[rank].coords[scheme.pipeline_dim]) * stride[scheme.pipeline_dim];
  };
  for (const OpCostRow& row : rep.per_op) {
    const Op& op = graph.ops[plan.ops.size()];
    plan.ops.push_back({row.op, std::string(op_kind_info(op.kind).name), row.signature, row.stage,
                        row.compute_s, row.boxing_s, row.grad_sync_s});
  }

  // ---- shapes, as evaluate() ----
  std::vector<Shape> shape_mb(n_tensors);
  std::vector<double> bytes_mb(n_tensors);
  for (int t = 0; t < n_tensors; ++t) {
    shape_mb[t] = micro_batch_shape(graph.tensors[t], m);
    bytes_mb[t] = static_cast<double>(product(shape_mb[t], 0, shape_mb[t].size()) *
                                      dtype_bytes(graph.tensors[t].dtype));
  }
  std::vector<int> out_slot(n_tensors, -1);
  for (const Op& op : graph.ops) {
    for (size_t o = 0; o < op.outputs.size(); ++o) out_slot[op.outputs[o]] = static_cast<int>(o);
  }
  std::vector<char> grad_charged(static_cast<size_t>(n_ops) * kMaxOpInputs, 1);
  {
    std::vector<std::vector<std::pair<int, NdSbp>>> seen(n_tensors);
    for (int i = 0; i < n_ops; ++i) {
      const Op& op = graph.ops[i];
      for (size_t k = 0; k < op.inputs.size(); ++k) {
        const int t = op.inputs[k];
        if (graph.tensors[t].producer < 0) continue;
        const NdSbp& g = scheme.op_sigs[i].in_grad[k];
        const int st = stage_of(i);
        bool dup = false;
        for (const auto& [s2, g2] : seen[t]) dup = dup || (s2 == st && g2 == g);
        if (dup) grad_charged[i * kMaxOpInputs + k] = 0;
        else seen[t].push_back({st, g});
      }
    }
  }
  DType train_dtype = DType::fp32;
  for (const Tensor& t : graph.tensors) {
    if (t.role == TensorRole::parameter) {
      train_dtype = t.dtype;
      break;
    }
  }

  // ---- per op: forward and backward event templates ----
  BoxingCache cache(sbp_mesh);
  std::vector<std::vector<Event>> fwd_events(n_ops), bwd_events(n_ops);
  std::vector<double> op_bwd_time(n_ops, 0);  // backward compute + boxing + send/recv, one micro-batch
  std::vector<std::vector<GradSync>> grads(S);
  auto collective_events = [&](std::vector<Event>& evs, int stage, const BoxingTable& table, int from, int to,
                               StepPhase phase, int op, const std::string& what, DType dt) {
    double t = 0;
    for (const BoxingStep& st : table.path(from, to)) {
      Event e;
      e.type = Event::collective;
      e.stage = stage;
      e.sbp_dim = st.dim;
      e.step.kind = StepKind::collective;
      e.step.phase = phase;
      e.step.op = op;
      e.step.what = what;
      e.step.dtype = std::string(dtype_name(dt));
      e.step.collective = std::string(collective_info(st.kind).name);
      e.step.bytes = st.bytes;
      e.step.predicted_s = st.time_s;
      t += st.time_s;
      evs.push_back(e);
    }
    return t;
  };
  auto p2p_event = [&](std::vector<Event>& evs, int from_stage, int to_stage, StepPhase phase, int op,
                       const std::string& what, DType dt, double local) {
    Event e;
    e.type = Event::p2p;
    e.stage = from_stage;
    e.to_stage = to_stage;
    e.step.phase = phase;
    e.step.op = op;
    e.step.what = what;
    e.step.dtype = std::string(dtype_name(dt));
    e.step.bytes = local;
    e.step.predicted_s = pp_tier.alpha_s + local * pp_tier.beta_s_per_byte;
    evs.push_back(e);
    return e.step.predicted_s;
  };

  for (int i = 0; i < n_ops; ++i) {
    const Op& op = graph.ops[i];
    const OpSignature& sig = scheme.op_sigs[i];
    const int stage = stage_of(i);
    const DType dt = graph.tensors[op.outputs.empty() ? op.inputs[0] : op.outputs[0]].dtype;
    const double split = sig.compute_split;
    const double fwd_flops = op.work.fwd_flops / m / split, fwd_bytes = op.work.fwd_bytes / m / split;
    const double bwd_flops = op.work.bwd_flops / m / split, bwd_bytes = op.work.bwd_bytes / m / split;
    const double fwd_s = kernel_time_s(cluster.gpu, op.kind, dt, fwd_flops, fwd_bytes, 1);
    const double bwd_core_s = kernel_time_s(cluster.gpu, op.kind, dt, bwd_flops, bwd_bytes, 2);
    const bool recompute = scheme.recompute == Recompute::full ||
                           (scheme.recompute == Recompute::selective && is_attention_core(graph, op));

    // Compute steps; predictions are the model's per pass, shared among a pass's GEMMs in
    // proportion to each GEMM's own roofline time.
    std::vector<PlanStep> fwd, bwd;
    if (op.kind == OpKind::matmul || op.kind == OpKind::conv2d) {
      gemm_steps(graph, op, sig, shape_mb, ms, dt, fwd, bwd);
    } else {
      fwd.push_back(memory_step("fwd", dt, fwd_flops, fwd_bytes, 1));
    }
    if (bwd.empty()) bwd.push_back(memory_step("bwd", dt, bwd_flops, bwd_bytes, 2));
    fwd[0].predicted_s = fwd_s;
    double weight = 0;
    for (const PlanStep& s : bwd) weight += kernel_time_s(cluster.gpu, op.kind, dt, s.flops, s.bytes, 1);
    for (PlanStep& s : bwd) {
      s.predicted_s = bwd_core_s * kernel_time_s(cluster.gpu, op.kind, dt, s.flops, s.bytes, 1) / weight;
    }
    if (recompute) {
      PlanStep r = fwd[0];
      r.what = "recompute";
      bwd.insert(bwd.begin(), r);
    }
    std::vector<Event> fwd_compute, bwd_compute;
    for (PlanStep& s : fwd) {
      s.phase = StepPhase::fwd, s.op = i;
      fwd_compute.push_back({Event::compute, stage, stage, 0, s});
    }
    for (PlanStep& s : bwd) {
      s.phase = StepPhase::bwd, s.op = i;
      bwd_compute.push_back({Event::compute, stage, stage, 0, s});
    }
    double bwd_s = bwd_core_s + (recompute ? fwd_s : 0);

    // Communication of each input, as evaluate() charges it.
    std::vector<Event> bwd_pre, bwd_post;
    for (int k = 0; k < sig.n_in; ++k) {
      const int t = op.inputs[k];
      const Tensor& tensor = graph.tensors[t];
      if (tensor.role == TensorRole::parameter) {
        const NdSbp& st = scheme.param_storage[t];
        const BoxingTable& table = cache.get(tensor.shape, static_cast<double>(tensor.bytes()));
        const int a = table.index_of(st), b = table.index_of(sig.in[k]);
        if (table.time_s(a, b) > 0) {
          collective_events(fwd_events[i], stage, table, a, b, StepPhase::fwd, i, "gather " + tensor.name, tensor.dtype);
          if (scheme.regather_in_backward) {
            bwd_s += collective_events(bwd_pre, stage, table, a, b, StepPhase::bwd, i, "regather " + tensor.name,
                                       tensor.dtype);
          }
        }
        const int g = table.index_of(sig.in_grad[k]);
        grads[stage].push_back({t, i, g, a, &table, static_cast<double>(tensor.bytes()), 0});
        continue;
      }
      const int j = tensor.producer;
      if (j < 0) continue;
      const OpSignature& psig = scheme.op_sigs[j];
      const int o = out_slot[t];
      const BoxingTable& table = cache.get(shape_mb[t], bytes_mb[t]);
      const bool cross = stage_of(j) != stage;
      if (cross) {
        p2p_event(fwd_events[i], stage_of(j), stage, StepPhase::fwd, i, tensor.name, tensor.dtype,
                  local_bytes(psig.out[o], ms, bytes_mb[t]));
      }
      collective_events(fwd_events[i], stage, table, table.index_of(psig.out[o]), table.index_of(sig.in[k]),
                        StepPhase::fwd, i, "boxing " + tensor.name, tensor.dtype);
      if (differentiable(tensor) && grad_charged[i * kMaxOpInputs + k]) {
        bwd_s += collective_events(bwd_post, stage, table, table.index_of(sig.in_grad[k]),
                                   table.index_of(psig.out_grad[o]), StepPhase::bwd, i, "grad " + tensor.name,
                                   tensor.dtype);
        if (cross) {
          bwd_s += p2p_event(bwd_post, stage, stage_of(j), StepPhase::bwd, i, "grad " + tensor.name, tensor.dtype,
                             local_bytes(sig.in_grad[k], ms, bytes_mb[t]));
        }
      }
    }
    fwd_events[i].insert(fwd_events[i].end(), fwd_compute.begin(), fwd_compute.end());
    bwd_events[i] = bwd_pre;
    bwd_events[i].insert(bwd_events[i].end(), bwd_compute.begin(), bwd_compute.end());
    bwd_events[i].insert(bwd_events[i].end(), bwd_post.begin(), bwd_post.end());
    op_bwd_time[i] = bwd_s;
  }

  // ---- gradient-sync buckets (cost_model.cpp's sync_buckets), per stage ----
  struct Bucket {
    int trigger_op;
    std::vector<Event> events;
  };
  std::vector<std::vector<Bucket>> buckets(S);
  std::vector<double> ready_at(n_ops, 0), bwd_clock(S, 0);
  for (int i = n_ops - 1; i >= 0; --i) {
    bwd_clock[stage_of(i)] += op_bwd_time[i];
    ready_at[i] = bwd_clock[stage_of(i)];
  }
  for (int s = 0; s < S; ++s) {
    std::vector<GradSync> uniq;
    std::map<int, size_t> slot;
    for (const GradSync& g0 : grads[s]) {
      GradSync g = g0;
      g.ready_s = ready_at[g.op];
      auto it = slot.find(g.tensor);
      if (it == slot.end()) {
        slot[g.tensor] = uniq.size();
        uniq.push_back(g);
      } else if (g.ready_s > uniq[it->second].ready_s) {
        uniq[it->second].ready_s = g.ready_s;
        uniq[it->second].op = g.op;
      }
    }
    std::stable_sort(uniq.begin(), uniq.end(), [](const GradSync& a, const GradSync& b) { return a.ready_s < b.ready_s; });
    std::vector<std::vector<BoxingStep>> paths;
    for (const GradSync& g : uniq) paths.push_back(g.table->path(g.from, g.to));
    auto same_steps = [&](size_t a, size_t b) {
      if (paths[a].size() != paths[b].size()) return false;
      for (size_t x = 0; x < paths[a].size(); ++x) {
        if (paths[a][x].dim != paths[b][x].dim || paths[a][x].kind != paths[b][x].kind) return false;
      }
      return true;
    };
    size_t i = 0;
    while (i < uniq.size()) {
      if (paths[i].empty()) {
        ++i;
        continue;
      }
      std::vector<BoxingStep> steps = paths[i];
      double bytes = uniq[i].bytes;
      size_t j = i + 1;
      while (j < uniq.size() && bytes < scheme.bucket_bytes && same_steps(i, j)) {
        for (size_t x = 0; x < steps.size(); ++x) steps[x].bytes += paths[j][x].bytes;
        bytes += uniq[j].bytes;
        ++j;
      }
      Bucket b{uniq[j - 1].op, {}};
      const int index = static_cast<int>(buckets[s].size());
      char what[96];
      std::snprintf(what, sizeof what, "bucket %d (%zu gradients, %.3g MB)", index, j - i, bytes / 1e6);
      for (const BoxingStep& st : steps) {
        Event e;
        e.type = Event::collective;
        e.stage = s;
        e.sbp_dim = st.dim;
        e.step.kind = StepKind::collective;
        e.step.phase = StepPhase::grad_sync;
        e.step.what = what;
        e.step.comm_stream = true;
        e.step.dtype = std::string(dtype_name(graph.tensors[uniq[i].tensor].dtype));
        e.step.collective = std::string(collective_info(st.kind).name);
        e.step.bytes = st.bytes;
        e.step.bucket = index;
        e.step.predicted_s = sbp_mesh.collective_time_s(st.dim, st.kind, st.bytes);
        b.events.push_back(e);
      }
      buckets[s].push_back(std::move(b));
      i = j;
    }
  }

  // ---- optimizer: local parameters per stage, as evaluate()'s memory pass counts them ----
  std::vector<double> local_params(S, 0);
  std::vector<int> param_stage(n_tensors, -1);
  for (int i = 0; i < n_ops; ++i) {
    const Op& op = graph.ops[i];
    const int s = stage_of(i);
    for (size_t k = 0; k < op.inputs.size(); ++k) {
      const int t = op.inputs[k];
      const Tensor& tensor = graph.tensors[t];
      if (tensor.role != TensorRole::parameter || param_stage[t] == s) continue;
      param_stage[t] = s;
      double store = local_bytes(scheme.param_storage[t], ms, static_cast<double>(tensor.bytes()));
      local_params[s] += store / dtype_bytes(tensor.dtype);
    }
  }

  // ---- emit in the global order ----
  auto emit = [&](const Event& e, int mb) {
    PlanStep st = e.step;
    st.micro_batch = mb;
    if (e.type == Event::compute) {
      for (int r : stage_ranks[e.stage]) plan.ranks[r].steps.push_back(st);
    } else if (e.type == Event::collective) {
      for (int r : stage_ranks[e.stage]) {
        st.group = group_of(r, sbp_to_full[e.sbp_dim]);
        plan.ranks[r].steps.push_back(st);
      }
    } else {
      for (int r : stage_ranks[e.stage]) {
        const int peer = peer_in_stage(r, e.to_stage);
        PlanStep send = st, recv = st;
        send.kind = StepKind::send, recv.kind = StepKind::recv;
        send.group = recv.group = group_of(r, scheme.pipeline_dim);
        send.peer = peer, recv.peer = r;
        send.what = "send " + st.what, recv.what = "recv " + st.what;
        plan.ranks[r].steps.push_back(send);
        plan.ranks[peer].steps.push_back(recv);
      }
    }
  };
  std::vector<size_t> next_bucket(S, 0);
  auto backward = [&](int i, int mb) {
    for (const Event& e : bwd_events[i]) emit(e, mb);
    if (mb != m - 1) return;
    const int s = stage_of(i);
    // A bucket goes once its last gradient is ready: its trigger op's backward is done (ops
    // run in reverse, so every op of the stage at index >= i is).
    while (next_bucket[s] < buckets[s].size() && buckets[s][next_bucket[s]].trigger_op >= i) {
      for (const Event& e : buckets[s][next_bucket[s]].events) emit(e, mb);
      ++next_bucket[s];
    }
  };
  if (S == 1) {
    for (int mb = 0; mb < m; ++mb) {
      for (int i = 0; i < n_ops; ++i) {
        for (const Event& e : fwd_events[i]) emit(e, mb);
      }
      for (int i = n_ops - 1; i >= 0; --i) backward(i, mb);
    }
  } else {
    for (int mb = 0; mb < m; ++mb) {
      for (int i = 0; i < n_ops; ++i) {
        for (const Event& e : fwd_events[i]) emit(e, mb);
      }
    }
    for (int mb = 0; mb < m; ++mb) {
      for (int i = n_ops - 1; i >= 0; --i) backward(i, mb);
    }
  }
  for (int s = 0; s < S; ++s) {
    AUTODDL_CHECK(next_bucket[s] == buckets[s].size()) << "gradient bucket never issued on stage " << s;
    if (local_params[s] <= 0) continue;
    const double bpp = 3.0 * dtype_bytes(train_dtype) + 2 * optimizer_bytes_per_param(train_dtype);
    Event e;
    e.stage = s;
    e.step = memory_step("adam", train_dtype, 0, local_params[s] * bpp, 1);
    e.step.phase = StepPhase::optimizer;
    e.step.predicted_s = optimizer_step_s(cluster.gpu, local_params[s], train_dtype);
    emit(e, m - 1);
  }
  return out;
}

}  // namespace autoddl::calib
