// `cd-nbh`: coordinate descent with neighbourhoods (OneFlow's NbhGreedyStrategy): after the
// plain sweeps, up to 4 adjacent coordinates are optimized jointly by branch and bound, from a
// work queue refilled with the neighbours of whatever changed; repeated until neither mode
// improves. Crosses valleys such as a column-parallel matmul feeding a row-parallel one.
#include "../descend.hpp"

namespace autoddl::search::methods {

std::vector<SearchResult> run_cd_nbh(SearchContext& ctx, std::string&) {
  CdOptions opt;
  opt.neighbourhood = true;
  opt.neighbourhood_size = 4;
  return {descend_from_seeds(ctx, "cd-nbh", opt)};
}

}  // namespace autoddl::search::methods
