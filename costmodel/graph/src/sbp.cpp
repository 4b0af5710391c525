// SBP values: printing, parsing, split factors (see sbp.hpp).
#include "autoddl/costmodel/sbp.hpp"

#include <cctype>

namespace autoddl::costmodel {

NdSbp NdSbp::all(Sbp s, int ndims) {
  NdSbp r;
  r.ndims = static_cast<uint8_t>(ndims);
  for (int d = 0; d < ndims; ++d) r.dims[d] = s;
  return r;
}

bool NdSbp::any_partial() const {
  for (int d = 0; d < ndims; ++d) {
    if (dims[d].is_partial()) return true;
  }
  return false;
}

std::string to_string(Sbp s) {
  switch (s.kind) {
    case Sbp::Kind::S: return "S(" + std::to_string(s.axis) + ")";
    case Sbp::Kind::B: return "B";
    case Sbp::Kind::P: return "P";
  }
  return "?";
}

std::string to_string(const NdSbp& s) {
  if (s.ndims == 1) return to_string(s.dims[0]);
  std::string out = "(";
  for (int d = 0; d < s.ndims; ++d) out += (d ? "," : "") + to_string(s.dims[d]);
  return out + ")";
}

bool parse_sbp(std::string_view t, Sbp& out) {
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.front()))) t.remove_prefix(1);
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.remove_suffix(1);
  if (t == "B") {
    out = Sbp::broadcast();
    return true;
  }
  if (t == "P") {
    out = Sbp::partial();
    return true;
  }
  if (t.size() >= 4 && t[0] == 'S' && t[1] == '(' && t.back() == ')') {
    std::string_view digits = t.substr(2, t.size() - 3);
    if (digits.empty() || digits.size() > 2) return false;
    int axis = 0;
    for (char c : digits) {
      if (!std::isdigit(static_cast<unsigned char>(c))) return false;
      axis = axis * 10 + (c - '0');
    }
    out = Sbp::split(axis);
    return true;
  }
  return false;
}

bool parse_nd_sbp(std::string_view t, int ndims, NdSbp& out) {
  if (t.size() >= 2 && t.front() == '(' && t.back() == ')') t = t.substr(1, t.size() - 2);
  NdSbp r;
  int d = 0;
  // Split on commas that are not inside S( ).
  size_t start = 0;
  int depth = 0;
  for (size_t i = 0; i <= t.size(); ++i) {
    if (i < t.size() && t[i] == '(') ++depth;
    if (i < t.size() && t[i] == ')') --depth;
    if (i == t.size() || (t[i] == ',' && depth == 0)) {
      if (d >= ndims || d >= kMaxMeshDims) return false;
      if (!parse_sbp(t.substr(start, i - start), r.dims[d])) return false;
      ++d;
      start = i + 1;
    }
  }
  if (d != ndims) return false;
  r.ndims = static_cast<uint8_t>(ndims);
  out = r;
  return true;
}

int64_t split_factor(const NdSbp& s, const int* mesh_shape, int axis) {
  int64_t f = 1;
  for (int d = 0; d < s.ndims; ++d) {
    if (s.dims[d].is_split() && s.dims[d].axis == axis) f *= mesh_shape[d];
  }
  return f;
}

bool divides(const NdSbp& s, const int* mesh_shape, const Shape& shape) {
  for (int d = 0; d < s.ndims; ++d) {
    if (!s.dims[d].is_split()) continue;
    int a = s.dims[d].axis;
    if (a < 0 || a >= static_cast<int>(shape.size())) return false;
  }
  for (size_t a = 0; a < shape.size(); ++a) {
    int64_t f = split_factor(s, mesh_shape, static_cast<int>(a));
    if (f > 1 && shape[a] % f != 0) return false;
  }
  return true;
}

double local_bytes(const NdSbp& s, const int* mesh_shape, double logical_bytes) {
  double f = 1;
  for (int d = 0; d < s.ndims; ++d) {
    if (s.dims[d].is_split()) f *= mesh_shape[d];
  }
  return logical_bytes / f;
}

}  // namespace autoddl::costmodel
