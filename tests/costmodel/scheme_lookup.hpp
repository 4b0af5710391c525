// Test helper: the signature a scheme gives the op named `op` (REQUIRE-ing the op exists).
#pragma once
#include <string>

#include "autoddl/costmodel/graph.hpp"
#include "autoddl/costmodel/scheme.hpp"

inline const autoddl::costmodel::OpSignature& sig_of(const autoddl::costmodel::Graph& g,
                                                     const autoddl::costmodel::Scheme& s, const std::string& op) {
  const int i = g.find_op(op);
  REQUIRE(i >= 0);
  return s.op_sigs[i];
}
