// `cd-mesh`: coordinate descent on every mesh of the same devices (mesh_candidates.hpp): the SBP
// meshes of 1 to 3 dims and the pipeline meshes [pp, sub...], keeping the fastest by evaluate().
// The nd-SBP space depends on the mesh: Megatron-LM's [dp, tp] = [8, 4] layout of 4 DGX nodes is
// not expressible on [4, 8], but is on [8, 4] or [4, 2, 4].
// Per mesh: the configuration search of SearchContext (micro-batches × recompute, and on a
// pipeline mesh also the chunks per stage and the stage partition by the min-max DP of
// pipeline.hpp), each configuration probed by a quick descent and ranked by evaluate(); then, in
// depth, plain descent from every seed and neighbourhood moves from the 3 best end points; the
// result is also judged with tensor-parallel communication overlapped (tp_overlap, a
// whole-scheme setting the tables do not see), and on a pipeline mesh the stages are partitioned
// again from the scheme found (rebalance.hpp). On a mesh where the Megatron-LM grid has a point,
// cd-expert's descent from the best one (expert_start.hpp) is a candidate too, so the result on
// that mesh is never slower than the grid there.
// Depth: the descents from the seeds run with neighbourhood moves only where the mesh's best
// configuration probe is within kDeepenMargin of the best found, plainly within kDescendMargin;
// elsewhere the probe is the mesh's result, reported as such (details: depth per mesh,
// plain_only, probe_only). The grid point's descent runs on every mesh that has one.
// Order and pruning (mesh_bound.hpp): a mesh whose parameters alone cannot fit is pruned; the
// rest go by the best grid point on them (an iteration some scheme there reaches), then by lower
// bound; a mesh whose bound is no lower than the fastest feasible iteration found is pruned, and
// inside a mesh so is every configuration whose bound (its recompute mode's compute, with its
// bubble on a pipeline) is; a mesh whose every configuration is pruned is pruned by bound. A mesh
// given with --mesh goes first, so the result is never slower than cd's from the same seeds. Its
// objective is over other tables than the shared ones, so the ILP bound does not apply to it.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>
#include <optional>

#include "../descend.hpp"
#include "../expert_start.hpp"
#include "../megatron_grid.hpp"
#include "../parallel.hpp"
#include "../rebalance.hpp"
#include "autoddl/costmodel/cost_model.hpp"
#include "autoddl/search/mesh_bound.hpp"
#include "autoddl/search/mesh_candidates.hpp"

namespace autoddl::search::methods {

namespace {

// Depth by how near a mesh's start comes to the best found (the iteration to beat): its best
// configuration probe (a quick descent over tied layers from 3 seeds, which ranks
// configurations) within kDeepenMargin gets the whole search (plain descent from every seed,
// neighbourhood moves from the 3 best); within kDescendMargin, plain descent from every seed (the
// probe can be far above what a plain descent reaches: 140 against 117.5 ms on BERT-base over 8
// Piz Daint GPUs as 2x2x2); beyond, the probe is the mesh's result. GPT-3's meshes without a
// pipeline probe at 1.5-3.7 times the best found. The descent from the grid's best point on the
// mesh runs on every mesh that has one (below).
constexpr double kDeepenMargin = 1.10;
constexpr double kDescendMargin = 1.50;
// The second pass (meshes searched shallowly in the first, deepened fastest first) runs while
// cd-mesh has used less than this share of its time limit, so the default search stays inside
// one time limit.
constexpr double kSecondPassShare = 0.75;
// Meshes searched at once, each against the best found before their wave (a constant, so the
// result does not depend on --jobs).
constexpr int kWave = 2;
// cd-mesh fills its time limit. In a search of several methods it ends by this share of the time
// limit counted from the search's start, leaving the rest to the methods after it (cd-expert, the
// baselines) and to the wave in flight: the default search stays within one --time-limit.
constexpr double kSearchShare = 0.9;

struct Candidate {
  MeshCandidate m;
  MeshBound bound;
  const GridPoint* expert = nullptr;  // the grid's best feasible point on this mesh
  bool given = false;
};

std::string seconds(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f s", v);
  return buf;
}

// The candidates, the given mesh (if any) first, then by the grid's best point on each, then by
// bound.
std::vector<Candidate> ordered_candidates(SearchContext& ctx, int devices) {
  const bool given = !ctx.options().mesh_shape.empty();
  const MegatronGrid* grid = devices == ctx.cluster().total_gpus() ? &ctx.expert_grid() : nullptr;
  std::vector<Candidate> order;
  for (const MeshCandidate& m : mesh_candidates(ctx.graph(), ctx.cluster(), devices)) {
    Candidate k{m, {}, nullptr, given && m.pipeline_dim < 0 && m.mesh == ctx.mesh_shape()};
    if (grid) {
      auto it = grid->best_by_mesh.find({m.mesh, m.pipeline_dim});
      if (it != grid->best_by_mesh.end() && it->second.report.feasible) k.expert = &it->second;
    }
    order.push_back(std::move(k));
  }
  ctx.progress("cd-mesh: lower bounds of " + std::to_string(order.size()) + " meshes");
  parallel_for(static_cast<int>(order.size()), ctx.options().jobs, [&](int i) {
    order[i].bound = mesh_lower_bound(ctx.graph(), ctx.cluster(), order[i].m.mesh, order[i].m.pipeline_dim);
  });
  const double none = std::numeric_limits<double>::infinity();
  std::stable_sort(order.begin(), order.end(), [&](const Candidate& a, const Candidate& b) {
    if (a.given != b.given) return a.given;
    const double ea = a.expert ? a.expert->report.iteration_s : none, eb = b.expert ? b.expert->report.iteration_s : none;
    if (ea != eb) return ea < eb;
    return a.bound.iteration_s < b.bound.iteration_s;
  });
  return order;
}

}  // namespace

std::vector<SearchResult> run_cd_mesh(SearchContext& ctx, std::string& skip) {
  const auto t0 = std::chrono::steady_clock::now();
  auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); };
  // cd-mesh's own time limit (kSearchShare), on its clock.
  const double limit_s =
      std::min(ctx.options().time_limit_s, kSearchShare * ctx.options().time_limit_s - ctx.seconds());
  if (ctx.options().pipeline_dim >= 0) {
    skip = "with a pipeline dim the mesh is searched as given";
    return {};
  }
  const costmodel::Graph& g = ctx.graph();
  const costmodel::ClusterSpec& c = ctx.cluster();
  int devices = 1;
  for (int x : ctx.mesh_shape()) devices *= x;
  // The grid walk (shared with megatron and cd-expert) counts against this method's time limit
  // when it walks first: with none left, the meshes' bounds are not even computed.
  if (devices == c.total_gpus()) ctx.expert_grid();
  if (elapsed() >= limit_s) {
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "no time left for the meshes: the search had run %.0f s of its %.0f s time limit when cd-mesh began "
                  "and the Megatron-LM grid walk %.0f s",
                  ctx.seconds() - elapsed(), ctx.options().time_limit_s, elapsed());
    skip = buf;
    return {};
  }
  const std::vector<Candidate> order = ordered_candidates(ctx, devices);
  SearchResult best;
  bool have = false;
  int pruned_memory = 0, pruned_bound = 0, configs_pruned = 0;
  nlohmann::json tried = nlohmann::json::array(), pruned = nlohmann::json::array();
  auto prune = [&](const Candidate& m, const char* reason, int& count) {
    ++count;
    pruned.push_back({{"mesh", m.m.mesh}, {"pipeline_dim", m.m.pipeline_dim}, {"bound_s", m.bound.iteration_s},
                      {"memory_bound_bytes", m.bound.memory_bytes}, {"reason", reason}});
  };
  auto offer = [&](SearchResult&& r) {
    if (have && !costmodel::ranks_above(r.report, best.report)) return;
    best = std::move(r);
    best.method = "cd-mesh";
    best.scheme.name = "cd-mesh";
    have = true;
  };
  const double inf = std::numeric_limits<double>::infinity();
  auto beat = [&] { return have && best.report.feasible ? best.report.iteration_s : inf; };
  // One mesh's search, independent of the others given the iteration to beat: its candidates
  // and its row, offered afterwards in the meshes' order.
  struct Outcome {
    std::vector<SearchResult> found;
    nlohmann::json row;
    int configurations_pruned = 0;
    bool every_configuration_pruned = false;
  };
  // `until_s`: cd-mesh's clock when this mesh's search must end (its pass's deadline).
  auto search_mesh = [&](size_t i, double to_beat, int jobs, bool full_depth, double until_s) {
    const Candidate& m = order[i];
    Outcome out;
    const double mesh_t0 = elapsed();
    const double left = until_s - mesh_t0;
    const std::string name = mesh_label(m.m);
    auto line = [&, i](const std::string& what) {
      ctx.progress("cd-mesh " + name + " (" + std::to_string(i + 1) + "/" + std::to_string(order.size()) +
                   ", bound " + seconds(m.bound.iteration_s) + "): " + what);
    };
    nlohmann::json& row = out.row;
    row = {{"mesh", m.m.mesh}, {"pipeline_dim", m.m.pipeline_dim}, {"bound_s", m.bound.iteration_s},
           {"memory_bound_bytes", m.bound.memory_bytes}};
    // The search's depth by the mesh's start (see kDeepenMargin).
    const double deepen_below = full_depth ? inf : to_beat * kDeepenMargin;
    const double descend_below = full_depth ? inf : to_beat * kDescendMargin;
    auto percent = [](double margin) { return std::to_string(static_cast<int>(std::lround((margin - 1) * 100))) + "%"; };
    auto note = [&](SearchResult& r) { r.note = "mesh " + name + ", " + r.note; };
    if (m.expert && !full_depth) {  // cd-expert's descent from the grid's best point on this mesh
      // Always, with neighbourhood moves: the grid point is the strongest start a mesh has, and
      // no margin predicts its descent (VGG16 / 64 A100's tp=16, dp=4 point on 4x16 descends
      // from 1.57 times the best found to within 0.2% of it).
      SearchOptions eo = ctx.options();
      eo.jobs = jobs;
      ExpertStart es = descend_from_expert(g, c, *m.expert, eo, "cd-mesh", left, line);
      row["expert"] = es.row;
      if (es.descended) {
        const std::string from = es.row["expert"].get<std::string>();
        SearchResult r;
        r.scheme = std::move(es.mapped);
        r.report = es.mapped_report;
        r.note = "= expert " + from + " (mapped)";
        note(r);
        out.found.push_back(std::move(r));
        r = SearchResult{};
        r.scheme = std::move(es.found);
        r.report = es.found_report;
        r.note = "from expert " + from;
        note(r);
        out.found.push_back(std::move(r));
      }
    }
    SearchOptions o = ctx.options();
    o.mesh_shape = m.m.mesh;
    o.pipeline_dim = m.m.pipeline_dim;
    o.time_limit_s = std::max(0.0, until_s - elapsed());
    o.stage_compute_bound_s = m.bound.stage_compute_by_recompute_s;
    o.beat_iteration_s = to_beat;
    o.deepen_below_s = descend_below;
    o.jobs = jobs;
    o.progress = line;
    SearchContext child(g, c, o);
    if (child.pruned()) {
      out.configurations_pruned = child.config().value("pruned_by_bound", 0);
      out.every_configuration_pruned = true;
      row["configurations_pruned"] = out.configurations_pruned;
    } else {
      const nlohmann::json& cfg = child.config();
      row["micro_batches"] = cfg["micro_batches"];
      row["recompute"] = cfg["recompute"];
      row["configurations"] = cfg["tried"].size();
      if (cfg.contains("virtual_stages")) row["virtual_stages"] = cfg["virtual_stages"];
      if (cfg.contains("pruned_by_bound")) {
        out.configurations_pruned = cfg["pruned_by_bound"].get<int>();
        row["configurations_pruned"] = out.configurations_pruned;
      }
      if (cfg.value("probe_only", false)) {
        // No configuration's probe came within the margin: the probe is the mesh's result.
        SearchResult r = child.result("cd-mesh", *child.incumbent(), 0);
        r.note = "configuration probe, not descended (not within " + percent(kDescendMargin) + " of the best found)";
        row["depth"] = "probe";
        note(r);
        out.found.push_back(std::move(r));
      } else {
        // Neighbourhood moves from the 3 best plain end points where the probe is within
        // kDeepenMargin; plain descent from every seed only, farther off.
        const bool deep = cfg.value("probe_iteration_s", inf) < deepen_below;
        CdOptions cd;
        cd.neighbourhood = deep;
        SearchResult r = descend_from_seeds(child, "cd-mesh", cd, /*joint_from_best=*/deep ? 3 : 0);
        row["depth"] = deep ? "neighbourhood" : "plain";
        if (!deep) r.note += " (plain descent: the probe is not within " + percent(kDeepenMargin) + " of the best found)";
        // The partition again from the scheme found (rebalance.hpp).
        if (rebalance_stages(g, c, child.tables().options(), r.scheme, r.report,
                             until_s - elapsed())) {
          r.note += ", stages rebalanced";
          row["rebalanced"] = true;
        }
        // The frameworks' overlaps, priced by evaluate() only, kept where they rank above: tp_overlap
        // (tensor-parallel collectives chunked under their GEMMs) and, with a sharded optimizer,
        // param_overlap (the shard gather under the next forward).
        auto try_overlap = [&](bool costmodel::Scheme::*flag, const char* what) {
          costmodel::Scheme overlapped = r.scheme;
          overlapped.*flag = true;
          const costmodel::CostReport ro = costmodel::evaluate(g, c, overlapped);
          if (!costmodel::ranks_above(ro, r.report)) return;
          r.scheme = std::move(overlapped);
          r.report = ro;
          r.note += what;
        };
        try_overlap(&costmodel::Scheme::overlap_tp_comm, ", tp_overlap");
        if (r.scheme.shard_optimizer && !r.scheme.overlap_param_gather) {
          try_overlap(&costmodel::Scheme::overlap_param_gather, ", param_overlap");
        }
        // ZeRO-3 storage gathered per layer: FSDP's prefetch of each layer's gather.
        if (r.scheme.regather_in_backward && !r.scheme.fsdp) try_overlap(&costmodel::Scheme::fsdp, ", fsdp prefetch");
        note(r);
        out.found.push_back(std::move(r));
      }
    }
    row["seconds"] = elapsed() - mesh_t0;
    return out;
  };
  // Meshes go in waves of kWave, searched in parallel with --jobs, each against the best found
  // before its wave: what is pruned and deepened does not depend on the number of threads.
  const int jobs = ctx.options().jobs;
  auto run_wave = [&](const std::vector<size_t>& meshes, double to_beat, bool full_depth, double until_s) {
    std::vector<Outcome> outcomes(meshes.size());
    const int inner_jobs = std::max(1, jobs / static_cast<int>(meshes.size()));
    parallel_for(static_cast<int>(meshes.size()), jobs,
                 [&](int w) { outcomes[w] = search_mesh(meshes[w], to_beat, inner_jobs, full_depth, until_s); });
    return outcomes;
  };
  // Offers a mesh's candidates (their notes ending in `suffix`); returns the best of them.
  auto offer_mesh = [&](Outcome& out, const char* suffix) {
    std::optional<costmodel::CostReport> mesh_best;
    for (SearchResult& r : out.found) {
      r.note += suffix;
      if (!mesh_best || costmodel::ranks_above(r.report, *mesh_best)) mesh_best = r.report;
      offer(std::move(r));
    }
    return mesh_best;
  };
  std::vector<size_t> row_mesh;  // per row of `tried`, its mesh's index in `order`
  for (size_t i = 0; i < order.size();) {
    std::vector<size_t> wave;
    const double to_beat = beat();
    for (; i < order.size() && static_cast<int>(wave.size()) < kWave; ++i) {
      const Candidate& m = order[i];
      if (!m.given && !m.bound.fits()) {
        prune(m, "memory: parameters alone exceed the GPU", pruned_memory);
        continue;
      }
      if (!m.given && m.bound.iteration_s >= to_beat) {
        prune(m, "bound: no scheme can beat the best found", pruned_bound);
        continue;
      }
      wave.push_back(i);
    }
    if (wave.empty()) break;
    if (limit_s - elapsed() <= 0) break;  // the rest: not reached
    std::vector<Outcome> outcomes = run_wave(wave, to_beat, false, limit_s);
    for (size_t w = 0; w < wave.size(); ++w) {
      Outcome& out = outcomes[w];
      configs_pruned += out.configurations_pruned;
      if (out.every_configuration_pruned && out.found.empty()) {
        prune(order[wave[w]],
              "bound: every configuration (micro-batches, chunks, recompute) is no faster than the best found",
              pruned_bound);
        continue;
      }
      const std::optional<costmodel::CostReport> mesh_best = offer_mesh(out, "");
      row_mesh.push_back(wave[w]);
      out.row["iteration_s"] = mesh_best ? nlohmann::json(mesh_best->iteration_s) : nlohmann::json(nullptr);
      out.row["feasible"] = mesh_best && mesh_best->feasible;
      tried.push_back(std::move(out.row));
    }
  }
  // Second pass: the meshes kept at their probe or descended plainly, fastest first, searched in
  // depth (neighbourhood moves from the seeds) while cd-mesh has used less than
  // kSecondPassShare of its time limit. Small models get the whole space in depth; on GPT-3 / 128
  // A100 the time decides how many (the margins order the work, the time limit bounds it).
  std::vector<size_t> shallow;  // indices into `tried`
  for (size_t k = 0; k < tried.size(); ++k) {
    const std::string depth = tried[k].value("depth", "");
    if (depth == "probe" || depth == "plain") shallow.push_back(k);
  }
  std::stable_sort(shallow.begin(), shallow.end(), [&](size_t a, size_t b) {
    const bool fa = tried[a].value("feasible", false), fb = tried[b].value("feasible", false);
    if (fa != fb) return fa;
    return tried[a]["iteration_s"].is_number() && tried[b]["iteration_s"].is_number()
               ? tried[a]["iteration_s"].get<double>() < tried[b]["iteration_s"].get<double>()
               : tried[a]["iteration_s"].is_number();
  });
  const double second_pass_until = std::min(kSecondPassShare * ctx.options().time_limit_s, limit_s);
  int deepened = 0;
  for (size_t s0 = 0; s0 < shallow.size() && elapsed() < second_pass_until;) {
    std::vector<size_t> rows, wave;  // rows of `tried`, and their meshes in `order`
    const double to_beat = beat();
    for (; s0 < shallow.size() && static_cast<int>(wave.size()) < kWave; ++s0) {
      if (order[row_mesh[shallow[s0]]].bound.iteration_s < to_beat) {
        rows.push_back(shallow[s0]);
        wave.push_back(row_mesh[shallow[s0]]);
      }
    }
    if (wave.empty()) continue;
    // Its meshes end by the second pass's deadline, so cd-mesh leaves the rest of its share to
    // the methods after it.
    std::vector<Outcome> outcomes = run_wave(wave, to_beat, true, second_pass_until);
    for (size_t w = 0; w < wave.size(); ++w) {
      nlohmann::json& row = tried[rows[w]];
      const std::optional<costmodel::CostReport> mesh_best = offer_mesh(outcomes[w], " (second pass)");
      ++deepened;
      row["depth"] = "neighbourhood";
      row["second_pass"] = true;
      if (mesh_best && (!row["iteration_s"].is_number() || mesh_best->iteration_s < row["iteration_s"].get<double>() ||
                        (mesh_best->feasible && !row.value("feasible", false)))) {
        row["iteration_s"] = mesh_best->iteration_s;
        row["feasible"] = mesh_best->feasible;
      }
      row["seconds"] = row["seconds"].get<double>() + outcomes[w].row["seconds"].get<double>();
    }
  }
  // Meshes that kept a shallow depth (the second pass did not reach them).
  int probe_only = 0, plain_only = 0;
  for (const nlohmann::json& row : tried) {
    const std::string depth = row.value("depth", "");
    probe_only += depth == "probe";
    plain_only += depth == "plain";
  }
  const size_t not_reached = order.size() - tried.size() - pruned.size();  // past the time limit
  ctx.progress("cd-mesh: " + std::to_string(tried.size()) + " of " + std::to_string(order.size()) + " meshes searched (" +
               std::to_string(deepened) + " deepened in a second pass, " + std::to_string(plain_only) +
               " by plain descent only, " + std::to_string(probe_only) +
               " kept at their probe), " + std::to_string(pruned_memory) +
               " pruned by memory, " + std::to_string(pruned_bound) + " by bound, " + std::to_string(not_reached) +
               " not reached in the time limit; " + std::to_string(configs_pruned) + " configurations pruned by bound");
  if (!have) {
    skip = "no mesh was searched: " + std::to_string(pruned_memory) + " pruned by memory, " +
           std::to_string(pruned_bound) + " by bound, the rest past the time limit";
    return {};
  }
  best.objective_s.reset();  // priced on that mesh's tables, not the shared ones
  best.best_objective_s.reset();
  best.search_s = elapsed();
  best.details["meshes"] = tried;
  best.details["pruned"] = pruned;
  best.details["meshes_total"] = order.size();
  best.details["pruned_by_memory"] = pruned_memory;
  best.details["pruned_by_bound"] = pruned_bound;
  best.details["configurations_pruned_by_bound"] = configs_pruned;
  best.details["not_reached"] = not_reached;
  best.details["probe_only"] = probe_only;
  best.details["deepen_margin"] = kDeepenMargin;
  best.details["descend_margin"] = kDescendMargin;
  best.details["plain_only"] = plain_only;
  best.details["second_pass"] = deepened;
  return {best};
}

}  // namespace autoddl::search::methods
