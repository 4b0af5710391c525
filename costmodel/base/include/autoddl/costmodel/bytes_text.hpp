// Byte counts as tables print them: binary units with four significant digits, as nccl-tests'
// sizes read (9658368 -> "9.211 MiB"). Shared by `autoddl fit`'s report and the CLI's tables.
#pragma once
#include <string>

namespace autoddl::costmodel {

std::string bytes_text(double bytes);

}  // namespace autoddl::costmodel
