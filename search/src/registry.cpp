// The one table of search methods: adding a method = one file in methods/ plus one row here.
#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/expert_schemes.hpp"
#include "autoddl/search/searcher.hpp"

namespace autoddl::search {

namespace methods {
std::vector<SearchResult> run_cd(SearchContext&, std::string&);
std::vector<SearchResult> run_cd_nbh(SearchContext&, std::string&);
std::vector<SearchResult> run_cd_mesh(SearchContext&, std::string&);
std::vector<SearchResult> run_cd_expert(SearchContext&, std::string&);
std::vector<SearchResult> run_chain_dp(SearchContext&, std::string&);
std::vector<SearchResult> run_ilp(SearchContext&, std::string&);
std::vector<SearchResult> run_ilp_tied(SearchContext&, std::string&);
std::vector<SearchResult> run_dp(SearchContext&, std::string&);
std::vector<SearchResult> run_zero1(SearchContext&, std::string&);
std::vector<SearchResult> run_zero3(SearchContext&, std::string&);
std::vector<SearchResult> run_megatron(SearchContext&, std::string&);
std::vector<SearchResult> run_owt(SearchContext&, std::string&);
}  // namespace methods

namespace {
// A fixed baseline's help is its expert scheme row's summary (expert_schemes.hpp).
std::string_view expert_help(std::string_view name) { return costmodel::find_expert_scheme(name)->summary; }
}  // namespace

const std::vector<Searcher>& searchers() {
  static const std::vector<Searcher> table = {
      {"cd", "coordinate descent from dp, ZeRO, Megatron-like and random seeds (AutoDDL)", false, methods::run_cd},
      {"cd-nbh", "coordinate descent plus joint moves of up to 4 adjacent ops (OneFlow-style)", false,
       methods::run_cd_nbh},
      {"cd-mesh", "cd-nbh on every mesh of the same GPUs (SBP meshes of 1-3 dims and pipeline meshes [pp, sub] with their stage partition, micro-batches, chunks, recompute), pruned by lower bounds; the fastest", false,
       methods::run_cd_mesh},
      {"cd-expert", "cd-nbh from the best Megatron-LM grid points on their own mesh, stages and configuration", false,
       methods::run_cd_expert},
      {"chain-dp", "exact dynamic programming when ops form a chain or tree", false, methods::run_chain_dp},
      {"ilp", "exact ILP of the same objective (Alpa), COIN-OR CBC under --time-limit", false, methods::run_ilp},
      {"ilp-tied", "lower bound (often the optimum) from one ILP per layer class, memory by Lagrange", false,
       methods::run_ilp_tied},
      {"dp", expert_help("dp"), true, methods::run_dp},
      {"zero1", expert_help("zero1"), true, methods::run_zero1},
      {"zero3", expert_help("zero3"), true, methods::run_zero3},
      {"megatron", "best Megatron-LM grid point: tp x pp x dp x micro-batch x sp x recompute", true,
       methods::run_megatron},
      {"owt", expert_help("owt"), true, methods::run_owt},
  };
  return table;
}

std::vector<std::string> default_methods() { return {"cd", "cd-nbh", "cd-expert", "cd-mesh", "baselines"}; }

const Searcher* find_searcher(std::string_view name) {
  for (const Searcher& s : searchers()) {
    if (s.name == name) return &s;
  }
  return nullptr;
}

}  // namespace autoddl::search
