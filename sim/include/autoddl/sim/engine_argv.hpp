// Arguments for SimGrid's Engine (sim/src/engine_argv.cpp).
#pragma once
#include <string>
#include <vector>

namespace autoddl::sim {

// The argc/argv every sg4::Engine of autoddl is created with: `args` (args[0] the program name),
// plus `--cfg=contexts/factory:thread` in a build with AddressSanitizer. SimGrid's default
// contexts switch actor stacks with ucontext/raw assembly, which ASan cannot follow (it warns on
// stderr and may report false positives); with one thread per actor ASan sees ordinary stacks.
// The same simulated times either way, only slower. Keep it alive as long as the Engine.
class EngineArgv {
 public:
  explicit EngineArgv(std::vector<std::string> args);
  EngineArgv(int argc, char** argv);
  EngineArgv(const EngineArgv&) = delete;
  EngineArgv& operator=(const EngineArgv&) = delete;
  int* argc() { return &argc_; }
  char** argv() { return ptrs_.data(); }

 private:
  std::vector<std::string> args_;
  std::vector<char*> ptrs_;
  int argc_ = 0;
};

}  // namespace autoddl::sim
