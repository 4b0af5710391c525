// A hash of a string that is the same on every platform and run, for seeding per (model, cluster)
// pair: FNV-1a's multiply-xor over the bytes. Its offset basis is not FNV's standard one (a digit
// short); it is kept, because every seeded dataset record, split and transfer draw depends on it.
#pragma once
#include <cstdint>
#include <string_view>

namespace autoddl::sync {

inline uint64_t stable_hash(std::string_view text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char ch : text) h = (h ^ ch) * 1099511628211ull;
  return h;
}

}  // namespace autoddl::sync
