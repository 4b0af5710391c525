// Coordinate descent from every seed of a SearchContext, shared by the `cd` and `cd-nbh`
// methods: each seed descends to a fixed point, every end point is judged by evaluate(), and
// the best (feasible first) is the method's result; the details list each seed's start and end
// objective, which is how "never worse than its seed" is checked.
#pragma once
#include <string>
#include <vector>

#include "autoddl/search/searcher.hpp"

namespace autoddl::search {

// joint_from_best > 0 (neighbourhood mode only): plain descent from every seed, then the
// neighbourhood moves from the `joint_from_best` lowest end points only (cd-mesh, many meshes).
SearchResult descend_from_seeds(SearchContext& ctx, const std::string& method, const CdOptions& base,
                                int joint_from_best = 0);

}  // namespace autoddl::search
