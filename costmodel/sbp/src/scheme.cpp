// Scheme helpers: schedule and recompute names, the SBP part of the mesh (see scheme.hpp).
#include "autoddl/costmodel/scheme.hpp"

namespace autoddl::costmodel {

std::string_view schedule_name(PipelineSchedule s) {
  switch (s) {
    case PipelineSchedule::gpipe: return "gpipe";
    case PipelineSchedule::one_f_one_b: return "1f1b";
    case PipelineSchedule::interleaved: return "interleaved";
  }
  return "?";
}

std::string_view recompute_name(Recompute r) {
  switch (r) {
    case Recompute::none: return "none";
    case Recompute::selective: return "selective";
    case Recompute::full: return "full";
  }
  return "?";
}

bool parse_schedule(std::string_view s, PipelineSchedule& out) {
  for (auto v : {PipelineSchedule::gpipe, PipelineSchedule::one_f_one_b, PipelineSchedule::interleaved}) {
    if (schedule_name(v) == s) {
      out = v;
      return true;
    }
  }
  return false;
}

bool parse_recompute(std::string_view s, Recompute& out) {
  for (auto v : {Recompute::none, Recompute::selective, Recompute::full}) {
    if (recompute_name(v) == s) {
      out = v;
      return true;
    }
  }
  return false;
}

std::vector<int> Scheme::sbp_shape() const {
  std::vector<int> s;
  for (int d = 0; d < static_cast<int>(mesh_shape.size()); ++d) {
    if (d != pipeline_dim) s.push_back(mesh_shape[d]);
  }
  if (s.empty()) s.push_back(1);
  return s;
}

}  // namespace autoddl::costmodel
