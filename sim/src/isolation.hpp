// Running one simulation per process. SimGrid 3.32's Engine cannot be created twice in a
// process (the second dies in sg_config: "Cannot change the model after the initialization")
// and zone builders keep static state, so each simulation runs in a fork()ed child that hands
// its serialized result back through a pipe. Errors in the child come back as the same kind
// of exception (InputError keeps file, field and reason); a child that dies (a signal, a
// nonzero exit) becomes InputError("simulation", "", reason): one error line, no backtrace.
#pragma once
#include <functional>
#include <string>

namespace autoddl::sim {

// Runs `body` in a child process and returns the bytes it produced.
std::string run_in_child(const std::function<std::string()>& body);

// Marks the calling process as having used its one in-process Engine; throws
// std::logic_error on the second call.
void claim_in_process_engine();

}  // namespace autoddl::sim
