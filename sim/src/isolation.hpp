// Running one simulation per process. SimGrid 3.32's Engine cannot be created twice in a
// process (the second dies in sg_config: "Cannot change the model after the initialization")
// and zone builders keep static state, so each simulation runs in a fork()ed child that hands
// its serialized result back through a pipe. Errors in the child come back as the same kind
// of exception (InputError keeps file, field and reason; std::bad_alloc stays std::bad_alloc, so
// the CLI says "out of memory" rather than the library's text); a child that dies (a signal, a
// nonzero exit) becomes InputError("simulation", "", reason): one error line, no backtrace.
#pragma once
#include <sys/types.h>

#include <functional>
#include <string>

namespace autoddl::sim {

// A running child: its pid, the read end of its pipe and the bytes read so far.
struct Child {
  pid_t pid = -1;
  int fd = -1;
  std::string data;
};

// Forks a child that runs `body` and writes its tagged result to the pipe.
Child start_child(const std::function<std::string()>& body);

// Reads what the pipe holds now (blocking until some bytes or EOF); false at EOF.
bool read_some(Child& c);

// Closes the pipe, reaps the child and returns its result, or throws its error (see above).
std::string finish_child(Child& c);

// Runs `body` in a child process and returns the bytes it produced.
std::string run_in_child(const std::function<std::string()>& body);

// Marks the calling process as having used its one in-process Engine; throws
// std::logic_error on the second call.
void claim_in_process_engine();

}  // namespace autoddl::sim
