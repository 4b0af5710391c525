// Byte counts in binary units (see bytes_text.hpp).
#include "autoddl/costmodel/bytes_text.hpp"

#include <cstdio>

namespace autoddl::costmodel {

std::string bytes_text(double b) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024 && u < 4) {
    b /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g %s", b, units[u]);
  return buf;
}

}  // namespace autoddl::costmodel
