// Test helpers: input_error_of runs a callable and returns the InputError it threw (or nothing),
// so tests can pin the file, the field and the reason of each bad-input case; CHECK_INPUT_ERROR
// checks the field and a part of the reason (include catch.hpp first).
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

// The expression throws an InputError on `field` whose reason contains `part`.
#define CHECK_INPUT_ERROR(expr, field_, part)               \
  do {                                                      \
    const auto err = input_error_of([&] { (void)(expr); }); \
    REQUIRE(err);                                           \
    CHECK(err->field() == (field_));                        \
    CHECK_THAT(err->reason(), Catch::Contains(part));       \
  } while (0)
