// The one error type of autoddl, and the invariant check.
// InputError means "the user gave us something we cannot use": every layer throws it with the
// file (or flag), the field and the reason; only the CLI's main catches it, prints one line and
// exits 2. Infeasible requests (memory over capacity) are results, not errors.
// AUTODDL_CHECK is for broken invariants (bugs): it prints file:line and aborts.
// Every part is made safe for one terminal line on construction (safe_text): control bytes and
// invalid UTF-8 are escaped and long parts truncated, so names read from files cannot forge lines.
#pragma once
#include <cstdlib>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <string>

namespace autoddl {

// `text` as one printable line: control bytes and invalid UTF-8 become \n, \t or \xNN, and
// anything past `max_bytes` is cut (at a character boundary) and noted as "...(N bytes)".
inline std::string safe_text(const std::string& text, size_t max_bytes = 400) {
  static const char* hex = "0123456789abcdef";
  std::string out;
  size_t i = 0;
  for (; i < text.size() && out.size() < max_bytes;) {
    const auto c = static_cast<unsigned char>(text[i]);
    size_t len = c < 0x80 ? 1 : (c >> 5) == 0x6 ? 2 : (c >> 4) == 0xe ? 3 : (c >> 3) == 0x1e ? 4 : 0;
    bool valid = len > 0 && i + len <= text.size();
    for (size_t k = 1; valid && k < len; ++k) valid = (static_cast<unsigned char>(text[i + k]) >> 6) == 0x2;
    if (valid && len == 1 && c >= 0x20 && c != 0x7f) {
      out += static_cast<char>(c);
    } else if (valid && len > 1) {
      out.append(text, i, len);
    } else {
      len = 1;
      out += c == '\n' ? "\\n" : c == '\t' ? "\\t" : c == '\r' ? "\\r" : std::string("\\x") + hex[c >> 4] + hex[c & 15];
    }
    i += len;
  }
  if (i < text.size()) out += "...(" + std::to_string(text.size()) + " bytes)";
  return out;
}

class InputError : public std::runtime_error {
 public:
  InputError(std::string file, std::string field, std::string reason)
      : std::runtime_error(format(safe_text(file), safe_text(field), safe_text(reason, 2000))),
        file_(safe_text(file)), field_(safe_text(field)), reason_(safe_text(reason, 2000)) {}

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
