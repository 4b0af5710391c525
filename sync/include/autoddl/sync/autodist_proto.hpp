// AutoDist's Strategy message (petuum/autodist autodist/proto/strategy.proto + synchronizers.proto,
// commit 9bf89c9) in its three serialized forms: protobuf text format, protobuf's canonical JSON
// mapping (lowerCamelCase names, enums by name), and the binary wire format that AutoDist's
// Strategy.serialize() writes and Strategy.deserialize() reads. In memory a message is a "tree":
// a JSON object keyed by the proto's field names ("var_name", not "varName"), repeated fields as
// arrays, enums by name. Every reader checks names, types, enum values and the synchronizer oneof
// against one field table (autodist_schema.hpp), so the mapping to autoddl's Strategy
// (autodist.hpp) sees only well-typed trees. Errors: InputError(source, "<line:col> or <field
// path>", reason). docs/autodist-format.md.
#pragma once
#include <string>

#include <nlohmann/json.hpp>

namespace autoddl::sync {

enum class AutodistFormat { text, json, binary };

// "text", "json", "binary"; parse_autodist_format throws InputError(flag, "", ...) for others.
const char* autodist_format_name(AutodistFormat f);
AutodistFormat parse_autodist_format(const std::string& name, const std::string& flag);

// The tree in the given form. Text and JSON end with a newline. Binary is byte-for-byte what
// protobuf writes for the same message: fields in number order, proto3 defaults left out.
std::string write_autodist_strategy(const nlohmann::json& tree, AutodistFormat f);

// Reads any of the three forms: JSON when the first non-blank byte is '{', binary when the bytes
// hold a control character that text never does (the wire format's tags and lengths), else text.
nlohmann::json read_autodist_strategy(const std::string& bytes, const std::string& source,
                                      AutodistFormat* detected = nullptr);

nlohmann::json parse_autodist_text(const std::string& text, const std::string& source);
// Accepts proto and lowerCamelCase names, enums by name or number, int32 as number or string,
// null as the field's default (what protobuf's JSON parser accepts).
nlohmann::json parse_autodist_json(const nlohmann::json& j, const std::string& source);
nlohmann::json parse_autodist_binary(const std::string& bytes, const std::string& source);

}  // namespace autoddl::sync
