// Integers read from hand-parsed text (scheme strings, shard specs, tool logs): the whole text
// in one range, or nothing. std::stoi/stol/atoi accept leading spaces, a '+' and trailing junk,
// and a cast to int afterwards cuts a large value to 32 bits ("tp=4294967304" priced as tp=8);
// these take decimal digits only and never return a value outside [lo, hi].
#pragma once
#include <charconv>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "autoddl/costmodel/error.hpp"

namespace autoddl {

// The whole of `text` as a decimal integer (an optional '-', then digits) if it lies in [lo, hi].
inline std::optional<int64_t> integer_in(std::string_view text, int64_t lo, int64_t hi) {
  int64_t v = 0;
  const char* end_of_text = text.data() + text.size();
  const auto [end, ec] = std::from_chars(text.data(), end_of_text, v);
  if (text.empty() || ec != std::errc() || end != end_of_text || v < lo || v > hi) return std::nullopt;
  return v;
}

// The reason to give when integer_in(text, lo, hi) found nothing: states the range.
inline std::string integer_range_reason(std::string_view text, int64_t lo, int64_t hi) {
  return "must be an integer in [" + std::to_string(lo) + ", " + std::to_string(hi) + "] (got '" +
         safe_text(std::string(text), 40) + "')";
}

}  // namespace autoddl
