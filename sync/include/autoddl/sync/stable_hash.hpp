// Seeds that are the same on every platform, run and build: stable_hash of a string, for seeding
// per (model, cluster) pair, and mix_seed of three integers, for one generator per (seed, purpose,
// index) in the low-shot search.
#pragma once
#include <cstdint>
#include <random>
#include <string_view>

namespace autoddl::sync {

// FNV-1a's multiply-xor over the bytes. Its offset basis is not FNV's standard one (a digit
// short); it is kept, because every seeded dataset record, split and transfer draw depends on it.
inline uint64_t stable_hash(std::string_view text) {
  uint64_t h = 1469598103934665603ull;
  for (unsigned char ch : text) h = (h ^ ch) * 1099511628211ull;
  return h;
}

// Four words of std::seed_seq{seed, a, b}, the first two as the low 64 bits, xor the last two
// shifted left by one. The words are combined by shifts, not read through a uint64_t array that
// generate() filled as uint32_t: that broke strict aliasing, and at -O2/-O3 GCC 12 returned
// mostly stack garbage (consecutive indices gave seeds a few bits apart, and other seeds than the
// -O1 sanitized build, so `search --sync` picked another strategy there).
inline uint64_t mix_seed(uint64_t seed, uint64_t a, uint64_t b) {
  std::seed_seq seq{seed, a, b};
  uint32_t w[4];
  seq.generate(w, w + 4);
  const uint64_t low = uint64_t{w[1]} << 32 | w[0], high = uint64_t{w[3]} << 32 | w[2];
  return low ^ (high << 1);
}

}  // namespace autoddl::sync
