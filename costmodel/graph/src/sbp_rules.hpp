// Internal: the 1-D SBP rule of each op kind (sbp_rules.cpp), referenced by the op registry.
#pragma once
#include <vector>

#include "autoddl/costmodel/graph.hpp"
#include "autoddl/costmodel/signature.hpp"

namespace autoddl::costmodel::sbp_rules {

#define AUTODDL_SBP_RULE(kind) void kind(const Graph& g, const Op& op, std::vector<Signature1D>& out);
AUTODDL_SBP_RULE(matmul)
AUTODDL_SBP_RULE(attention)
AUTODDL_SBP_RULE(conv2d)
AUTODDL_SBP_RULE(pool)
AUTODDL_SBP_RULE(bias_add)
AUTODDL_SBP_RULE(unary)
AUTODDL_SBP_RULE(binary)
AUTODDL_SBP_RULE(softmax)
AUTODDL_SBP_RULE(layer_norm)
AUTODDL_SBP_RULE(batch_norm)
AUTODDL_SBP_RULE(embedding)
AUTODDL_SBP_RULE(reshape)
AUTODDL_SBP_RULE(transpose)
AUTODDL_SBP_RULE(concat)
AUTODDL_SBP_RULE(cross_entropy)
#undef AUTODDL_SBP_RULE

}  // namespace autoddl::costmodel::sbp_rules
