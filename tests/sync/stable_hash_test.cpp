// The low-shot search's per-run seeds (mix_seed) are the same in every build: std::seed_seq's
// words are fixed by the C++ standard ([rand.util.seedseq]), so mix_seed(1, 1, 0) has one value
// everywhere; this binary runs it as built (Release -O3 and the -O1 sanitized build alike). The
// seeds of consecutive runs are far apart: reading the words through a uint64_t array broke
// strict aliasing, and at -O3 the seeds of consecutive runs differed in a few bits of stack garbage.
#include "autoddl/sync/stable_hash.hpp"

#include <catch2/catch.hpp>

#include <bitset>
#include <set>

using autoddl::sync::mix_seed;

TEST_CASE("mix_seed gives the standard's seed_seq value in every build", "[sync][seed]") {
  // std::seed_seq{1, 1, 0} generates the words 0x2f378d3a, 0x500ba441, 0x0c076e9e, 0x961dacd7
  // (libstdc++ at -O0, by the standard's algorithm): 8948931663450689542. The -O3 build of the
  // aliasing version returned 2664326793728529642.
  CHECK(mix_seed(1, 1, 0) == ((0x500ba441ull << 32 | 0x2f378d3aull) ^ ((0x961dacd7ull << 32 | 0x0c076e9eull) << 1)));
  CHECK(mix_seed(1, 1, 0) == 8948931663450689542ull);
}

TEST_CASE("mix_seed's seeds of consecutive runs differ in many bits", "[sync][seed]") {
  std::set<uint64_t> seen;
  for (uint64_t purpose : {1, 2, 3}) {
    for (uint64_t i = 0; i < 64; ++i) {
      const uint64_t s = mix_seed(1, purpose, i), next = mix_seed(1, purpose, i + 1);
      CHECK(std::bitset<64>(s ^ next).count() >= 12);
      seen.insert(s);
    }
  }
  CHECK(seen.size() == 3 * 64);
  CHECK(mix_seed(2, 1, 0) != mix_seed(1, 1, 0));
}
