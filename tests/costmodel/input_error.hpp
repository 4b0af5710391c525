// Test helper: runs a callable and returns the InputError it threw (or nothing), so tests can
// pin the file, the field and the reason of each bad-input case.
#pragma once
#include <optional>

#include "autoddl/costmodel/error.hpp"

template <class F>
std::optional<autoddl::InputError> input_error_of(F&& f) {
  try {
    f();
  } catch (const autoddl::InputError& e) {
    return e;
  }
  return std::nullopt;
}
