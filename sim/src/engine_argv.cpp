// EngineArgv (engine_argv.hpp): the thread context factory under AddressSanitizer.
#include "autoddl/sim/engine_argv.hpp"

#include <utility>

namespace autoddl::sim {

namespace {
constexpr bool address_sanitizer_build() {
#if defined(__SANITIZE_ADDRESS__)
  return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
  return true;
#else
  return false;
#endif
#else
  return false;
#endif
}
}  // namespace

EngineArgv::EngineArgv(std::vector<std::string> args) : args_(std::move(args)) {
  if (address_sanitizer_build()) args_.emplace_back("--cfg=contexts/factory:thread");
  for (std::string& a : args_) ptrs_.push_back(a.data());
  ptrs_.push_back(nullptr);
  argc_ = static_cast<int>(args_.size());
}

EngineArgv::EngineArgv(int argc, char** argv) : EngineArgv(std::vector<std::string>(argv, argv + argc)) {}

}  // namespace autoddl::sim
