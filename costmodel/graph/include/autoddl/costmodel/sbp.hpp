// SBP (OneFlow): per mesh dimension a tensor is Split(axis), Broadcast or Partial-sum; an
// nd-SBP holds one per mesh dimension (mesh dims beyond `ndims` are unused). Plain values, so
// signature and boxing tables can be copied and compared in hot loops without allocation.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "autoddl/costmodel/graph.hpp"

namespace autoddl::costmodel {

inline constexpr int kMaxMeshDims = 3;

struct Sbp {
  enum class Kind : uint8_t { S, B, P };
  Kind kind = Kind::B;
  int8_t axis = 0;  // the split axis when kind == S, else 0

  static constexpr Sbp split(int a) { return Sbp{Kind::S, static_cast<int8_t>(a)}; }
  static constexpr Sbp broadcast() { return Sbp{Kind::B, 0}; }
  static constexpr Sbp partial() { return Sbp{Kind::P, 0}; }
  constexpr bool is_split() const { return kind == Kind::S; }
  constexpr bool is_broadcast() const { return kind == Kind::B; }
  constexpr bool is_partial() const { return kind == Kind::P; }
  friend constexpr bool operator==(Sbp a, Sbp b) { return a.kind == b.kind && a.axis == b.axis; }
};

struct NdSbp {
  std::array<Sbp, kMaxMeshDims> dims{};
  uint8_t ndims = 0;

  static NdSbp all(Sbp s, int ndims);
  friend bool operator==(const NdSbp& a, const NdSbp& b) {
    if (a.ndims != b.ndims) return false;
    for (int d = 0; d < a.ndims; ++d) {
      if (!(a.dims[d] == b.dims[d])) return false;
    }
    return true;
  }
  bool any_partial() const;
};

// "S(0)", "B", "P"; nd-SBPs as "(S(0),B)".
std::string to_string(Sbp s);
std::string to_string(const NdSbp& s);
// Parses "S(1)", "B", "P", and nd forms "(S(0),B)" or "S(0),B"; false on malformed text.
bool parse_sbp(std::string_view text, Sbp& out);
bool parse_nd_sbp(std::string_view text, int ndims, NdSbp& out);

// How many pieces `axis` of a tensor is cut into by this nd-SBP on a mesh.
int64_t split_factor(const NdSbp& s, const int* mesh_shape, int axis);
// Whether every split axis of `shape` divides evenly by its split factor (and exists).
bool divides(const NdSbp& s, const int* mesh_shape, const Shape& shape);
// Bytes of one device's local piece: |T| / product of mesh sizes of split dims.
double local_bytes(const NdSbp& s, const int* mesh_shape, double logical_bytes);

}  // namespace autoddl::costmodel
