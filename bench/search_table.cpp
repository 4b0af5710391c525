// Issue 4's acceptance table: every zoo model (default knobs) × meshes [8], [2,4] (one DGX A100
// node) and [4,8] (four nodes): neighbourhood CD against the ILP optimum of the same table
// objective (where CBC proves it within --time-limit) and against the best baseline by the cost
// model's iteration time (CD's objective is the lowest any seed's descent reached; the scheme it
// returns is the one evaluate() rates best); cd-mesh (CD over mesh shapes of the same GPUs) alongside, since
// Megatron-LM's baseline picks its own mesh. Exit status 1 when CD is more than 1% above a
// proven ILP optimum, or when neither CD variant matches the best baseline.
// Usage: search_table [--time-limit S] [--models a,b] [--json FILE]
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/io.hpp"
#include "autoddl/costmodel/zoo.hpp"
#include "autoddl/search/searcher.hpp"

using namespace autoddl;
using namespace autoddl::costmodel;
using namespace autoddl::search;

namespace {

const SearchResult* find(const SearchRun& run, const std::string& m) {
  for (const auto& r : run.results) {
    if (r.method == m) return &r;
  }
  return nullptr;
}

std::string mesh_text(const std::vector<int>& m) {
  std::string s = "[";
  for (size_t i = 0; i < m.size(); ++i) s += (i ? "," : "") + std::to_string(m[i]);
  return s + "]";
}

}  // namespace

int main(int argc, char** argv) {
  double limit = 300;
  std::string json_file;
  std::vector<std::string> models;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--time-limit") && i + 1 < argc) limit = std::atof(argv[++i]);
    else if (!std::strcmp(argv[i], "--json") && i + 1 < argc) json_file = argv[++i];
    else if (!std::strcmp(argv[i], "--models") && i + 1 < argc) {
      std::stringstream ss(argv[++i]);
      for (std::string m; std::getline(ss, m, ',');) models.push_back(m);
    } else {
      std::fprintf(stderr, "usage: %s [--time-limit S] [--models a,b] [--json FILE]\n", argv[0]);
      return 2;
    }
  }
  if (models.empty()) {
    for (const ZooModel& m : zoo_models()) models.emplace_back(m.name);
  }
  const std::vector<std::pair<int, std::vector<int>>> meshes = {{1, {8}}, {1, {2, 4}}, {4, {4, 8}}};
  std::printf("CD vs ILP vs baselines, dgx-a100, ILP time limit %.0f s; times are evaluate()'s iteration, objectives the table's\n\n", limit);
  std::printf("%-9s %-6s %5s | %10s %10s | %10s %10s %-8s %7s | %10s %-28s | %10s %-8s\n", "model", "mesh", "ops",
              "cd-nbh", "cd obj", "ilp obj", "ilp bound", "status", "cd gap", "baseline", "best baseline", "cd-mesh",
              "mesh");
  nlohmann::json rows = nlohmann::json::array();
  int ilp_cases = 0, ilp_ok = 0, base_cases = 0, base_ok = 0, base_ok_fixed = 0;
  for (const std::string& model : models) {
    const Graph g = build_zoo_model(model, {});
    for (const auto& [nodes, mesh] : meshes) {
      const ClusterSpec c = resolve_cluster("dgx-a100", nodes);
      SearchOptions o;
      o.mesh_shape = mesh;
      o.time_limit_s = limit;
      const SearchRun run = run_search(g, c, o, {"cd-nbh", "cd-mesh", "ilp", "baselines"});
      const SearchResult* cd = find(run, "cd-nbh");
      const SearchResult* ilp = find(run, "ilp");
      const SearchResult* cdm = find(run, "cd-mesh");
      const SearchResult* base = nullptr;
      for (const auto& r : run.results) {
        const bool is_base = r.method == "dp" || r.method == "zero1" || r.method == "zero3" ||
                             r.method == "megatron" || r.method == "owt";
        if (is_base && r.unavailable.empty() && r.report.feasible &&
            (!base || r.report.iteration_s < base->report.iteration_s)) {
          base = &r;
        }
      }
      // CD as an optimizer of the table objective: the lowest objective any seed's descent
      // reached (the scheme cd-nbh returns is the one evaluate() rates best among them).
      double cd_obj = 0;
      if (cd) {
        cd_obj = *cd->objective_s;
        for (const auto& s : cd->details["seeds"]) cd_obj = std::min(cd_obj, s["objective_s"].get<double>());
      }
      double gap = -1;
      if (cd && ilp && ilp->optimal) {
        gap = (cd_obj - *ilp->objective_s) / *ilp->objective_s;
        ++ilp_cases;
        ilp_ok += gap <= 0.01;
      }
      if (base && cd) {
        ++base_cases;
        const double best_cd = std::min(cd->report.iteration_s, cdm ? cdm->report.iteration_s : 1e300);
        base_ok += best_cd <= base->report.iteration_s * (1 + 1e-9);
        base_ok_fixed += cd->report.iteration_s <= base->report.iteration_s * (1 + 1e-9);
      }
      char gap_text[16] = "-";
      if (gap > -1e-9) std::snprintf(gap_text, sizeof gap_text, "%.2f%%", std::max(0.0, gap) * 100);
      std::string base_name = base ? base->method + (base->method == "megatron" ? " " + base->note.substr(0, base->note.find(",mb")) : "") : "-";
      std::string cdm_mesh = cdm ? cdm->note.substr(5, cdm->note.find(',') - 5) : "-";
      std::printf("%-9s %-6s %5zu | %8.3f ms %8.3f ms | %8.3f ms %8.3f ms %-8s %7s | %8.3f ms %-28s | %8.3f ms %-8s\n",
                  model.c_str(), mesh_text(mesh).c_str(), g.ops.size(), cd ? cd->report.iteration_s * 1e3 : 0,
                  cd_obj * 1e3, ilp ? *ilp->objective_s * 1e3 : 0,
                  ilp && ilp->bound_s ? *ilp->bound_s * 1e3 : 0,
                  ilp ? (ilp->optimal ? "optimal" : "limit") : "none", gap_text,
                  base ? base->report.iteration_s * 1e3 : 0, base_name.c_str(),
                  cdm ? cdm->report.iteration_s * 1e3 : 0, cdm_mesh.c_str());
      std::fflush(stdout);
      nlohmann::json row = {{"model", model}, {"mesh", mesh}, {"ops", g.ops.size()}};
      if (cd) {
        row["cd_nbh"] = {{"iteration_s", cd->report.iteration_s}, {"objective_s", cd_obj},
                         {"returned_objective_s", *cd->objective_s}, {"search_s", cd->search_s}};
      }
      if (ilp) {
        row["ilp"] = {{"objective_s", *ilp->objective_s}, {"optimal", ilp->optimal}, {"search_s", ilp->search_s},
                      {"iteration_s", ilp->report.iteration_s}};
        if (ilp->bound_s) row["ilp"]["bound_s"] = *ilp->bound_s;
      }
      if (gap > -1e-9) row["cd_gap_to_optimum"] = std::max(0.0, gap);
      if (base) row["best_baseline"] = {{"method", base->method}, {"note", base->note}, {"iteration_s", base->report.iteration_s}};
      if (cdm) row["cd_mesh"] = {{"iteration_s", cdm->report.iteration_s}, {"note", cdm->note}, {"search_s", cdm->search_s}};
      for (const auto& [m, why] : run.skipped) row["skipped"][m] = why;
      rows.push_back(row);
    }
  }
  std::printf("\ncd-nbh within 1%% of a proven ILP optimum: %d of %d cases\n", ilp_ok, ilp_cases);
  std::printf("cd-nbh (given mesh) at least as fast as the best baseline: %d of %d cases\n", base_ok_fixed, base_cases);
  std::printf("best of cd-nbh and cd-mesh at least as fast as the best baseline: %d of %d cases\n", base_ok, base_cases);
  if (!json_file.empty()) write_json_atomic(json_file, {{"time_limit_s", limit}, {"rows", rows}});
  return ilp_ok == ilp_cases && base_ok == base_cases ? 0 : 1;
}
