// OpError: the InputError of a graph check that concerns one op, remembering which op and which
// slot ("inputs[1]", "outputs[0]", or "" for the op as a whole). The zoo and the CLI see a plain
// InputError (field "op <name>"); the JSON loader uses the slot to name the exact JSON path
// (ops[3].inputs[1]). Internal to costmodel/graph/src.
#pragma once
#include <string>

#include "autoddl/costmodel/error.hpp"

namespace autoddl::costmodel {

class OpError : public InputError {
 public:
  // what(): "<source>: op <op_name>: <slot_label><detail>" where slot_label is e.g.
  // "input 1 'w2': " (the reader-facing form of the slot).
  OpError(const std::string& source, const std::string& op_name, std::string slot,
          const std::string& slot_label, std::string detail)
      : InputError(source, "op " + op_name, slot_label + detail),
        op_name_(op_name),
        slot_(std::move(slot)),
        detail_(std::move(detail)) {}

  const std::string& op_name() const { return op_name_; }
  const std::string& slot() const { return slot_; }      // "inputs[1]", "outputs[0]" or ""
  const std::string& detail() const { return detail_; }  // the reason without the slot label

 private:
  std::string op_name_, slot_, detail_;
};

}  // namespace autoddl::costmodel
