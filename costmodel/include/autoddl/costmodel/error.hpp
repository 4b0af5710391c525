// The one error type of autoddl, and the invariant check.
// InputError means "the user gave us something we cannot use": every layer throws it with the
// file (or flag), the field and the reason; only the CLI's main catches it, prints one line and
// exits 2. Infeasible requests (memory over capacity) are results, not errors.
// AUTODDL_CHECK is for broken invariants (bugs): it prints file:line and aborts.
#pragma once
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace autoddl {

class InputError : public std::runtime_error {
 public:
  InputError(std::string file, std::string field, std::string reason)
      : std::runtime_error(format(file, field, reason)),
        file_(std::move(file)), field_(std::move(field)), reason_(std::move(reason)) {}

  const std::string& file() const { return file_; }
  const std::string& field() const { return field_; }
  const std::string& reason() const { return reason_; }

  // "<file>: <field>: <reason>", empty parts left out.
  static std::string format(const std::string& file, const std::string& field,
                            const std::string& reason) {
    std::string out;
    for (const std::string* part : {&file, &field}) {
      if (!part->empty()) out += *part + ": ";
    }
    return out + reason;
  }

 private:
  std::string file_, field_, reason_;
};

namespace detail {
// Collects the message of a failed AUTODDL_CHECK, then aborts in its destructor.
class CheckFailure {
 public:
  CheckFailure(const char* cond, const char* file, int line) {
    msg_ << file << ":" << line << ": check failed: " << cond << ": ";
  }
  [[noreturn]] ~CheckFailure() {
    std::cerr << msg_.str() << std::endl;
    std::abort();
  }
  template <class T>
  CheckFailure& operator<<(const T& v) {
    msg_ << v;
    return *this;
  }

 private:
  std::ostringstream msg_;
};
}  // namespace detail

}  // namespace autoddl

// AUTODDL_CHECK(cond) << "message": abort with file:line when an invariant is broken.
#define AUTODDL_CHECK(cond) \
  if (cond) {               \
  } else                    \
    ::autoddl::detail::CheckFailure(#cond, __FILE__, __LINE__)
