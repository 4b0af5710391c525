// The field table of AutoDist's Strategy message (petuum/autodist autodist/proto/strategy.proto and
// synchronizers.proto, commit 9bf89c9): one row per field with its proto name, number, kind and
// whether it repeats. The text, JSON and binary readers and writers (autodist_text.cpp,
// autodist_proto.cpp, autodist_wire.cpp) all walk this table, so the three forms cannot disagree
// about a field. Private to sync/src.
#pragma once
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace autoddl::sync::autodist_schema {

enum class Kind { string, boolean, int32, enumeration, message };

struct Message;

struct Field {
  const char* name;                     // the proto's field name ("var_name", "PSSynchronizer")
  int number;                           // its field number (the binary form's tag)
  Kind kind;
  bool repeated = false;
  const Message* message = nullptr;     // kind == message
  std::vector<const char*> enum_names;  // kind == enumeration: value i is enum_names[i]
  const char* oneof = nullptr;          // the oneof it belongs to, if any
};

struct Message {
  const char* name;
  std::vector<Field> fields;  // in field-number order (the order protobuf serializes)
  const Field* by_name(const std::string& name) const;
  const Field* by_json_name(const std::string& name) const;  // proto or lowerCamelCase name
  const Field* by_number(int number) const;
};

const Message& strategy_message();

// protobuf's JSON name of a field: underscores dropped, the letter after one upper-cased
// ("var_name" -> "varName"; "PSSynchronizer" stays).
std::string json_name(const char* proto_name);

// Stores `value` (already of the field's type: string, bool, integer, enum name, object) as
// field `f` of the message tree `msg`: repeated fields append, a scalar or message set twice, or
// a second member of a oneof, throws InputError(source, where, reason).
void set_field(nlohmann::json& msg, const Message& m, const Field& f, nlohmann::json value,
               const std::string& source, const std::string& where);

// Deepest message nesting the readers follow (Strategy > node_config > part_config is 3; AutoDist
// never nests parts in parts): a crafted file nested a million deep must not exhaust the stack.
inline constexpr int kMaxDepth = 16;

// "node_config[2].part_config[0]" style paths.
std::string child_path(const std::string& parent, const std::string& field);

// The writers behind write_autodist_strategy (autodist_text.cpp, autodist_wire.cpp).
std::string text_form(const nlohmann::json& tree);
std::string binary_form(const nlohmann::json& tree);

}  // namespace autoddl::sync::autodist_schema
