// `cd`: AutoDDL's coordinate descent. Every op (or tied coordinate) takes its argmin with its
// neighbours fixed, sweeping forward then backward to a fixed point, from each seed (data
// parallel, ZeRO-3, Megatron-like and other role mixes, random restarts).
#include "../descend.hpp"

namespace autoddl::search::methods {

std::vector<SearchResult> run_cd(SearchContext& ctx, std::string&) {
  CdOptions opt;
  return {descend_from_seeds(ctx, "cd", opt)};
}

}  // namespace autoddl::search::methods
