// AutoDist strategy forms (autodist_proto.hpp): the format names, detection, and the canonical
// JSON mapping (protobuf's JsonFormat: lowerCamelCase names, enums by name, int32 as numbers).
// The text form is autodist_text.cpp, the binary one autodist_wire.cpp.
#include "autoddl/sync/autodist_proto.hpp"

#include <climits>

#include "autodist_schema.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/io.hpp"

namespace autoddl::sync {

using nlohmann::json;
namespace as = autodist_schema;

const char* autodist_format_name(AutodistFormat f) {
  switch (f) {
    case AutodistFormat::text: return "text";
    case AutodistFormat::json: return "json";
    case AutodistFormat::binary: return "binary";
  }
  return "?";
}

AutodistFormat parse_autodist_format(const std::string& name, const std::string& flag) {
  for (AutodistFormat f : {AutodistFormat::text, AutodistFormat::json, AutodistFormat::binary}) {
    if (name == autodist_format_name(f)) return f;
  }
  throw InputError(flag, "", "unknown format '" + name + "' (known: text, json, binary)");
}

namespace {

// Field-number order, as protobuf prints it (nlohmann's json would sort the keys).
nlohmann::ordered_json to_json_names(const json& msg, const as::Message& m) {
  nlohmann::ordered_json out = nlohmann::ordered_json::object();
  for (const as::Field& f : m.fields) {
    if (!msg.contains(f.name)) continue;
    const json& v = msg.at(f.name);
    if (f.kind != as::Kind::message) {
      out[as::json_name(f.name)] = v;
    } else if (f.repeated) {
      nlohmann::ordered_json list = nlohmann::ordered_json::array();
      for (const json& e : v) list.push_back(to_json_names(e, *f.message));
      out[as::json_name(f.name)] = std::move(list);
    } else {
      out[as::json_name(f.name)] = to_json_names(v, *f.message);
    }
  }
  return out;
}

json scalar_from_json(const json& v, const as::Field& f, const std::string& source, const std::string& where) {
  switch (f.kind) {
    case as::Kind::string:
      if (!v.is_string()) throw InputError(source, where, "must be a string");
      return v;
    case as::Kind::boolean:
      if (!v.is_boolean()) throw InputError(source, where, "must be true or false");
      return v;
    case as::Kind::int32: {
      // protobuf's JSON parser takes an int32 as a number or a decimal string.
      json n = v;
      if (v.is_string()) n = json::parse(v.get<std::string>(), nullptr, false);
      if (!n.is_number_integer() || !json_int_in(n, INT_MIN, INT_MAX))
        throw InputError(source, where, "must be an int32");
      return n.get<int>();
    }
    case as::Kind::enumeration: {
      if (v.is_number_integer()) {
        if (!json_int_in(v, 0, static_cast<int64_t>(f.enum_names.size()) - 1))
          throw InputError(source, where, "enum value " + v.dump() + " is not in " + f.name + "'s enum");
        return f.enum_names[v.get<size_t>()];
      }
      if (v.is_string()) {
        for (const char* e : f.enum_names) {
          if (v.get<std::string>() == e) return e;
        }
      }
      std::string known;
      for (const char* e : f.enum_names) known += (known.empty() ? "" : ", ") + std::string(e);
      throw InputError(source, where, "unknown enum value " + v.dump() + " (known: " + known + ")");
    }
    case as::Kind::message: break;
  }
  return nullptr;
}

json message_from_json(const json& j, const as::Message& m, const std::string& source, const std::string& path,
                       int depth = 0) {
  if (depth > as::kMaxDepth)
    throw InputError(source, path, "messages nested more than " + std::to_string(as::kMaxDepth) + " deep");
  if (!j.is_object()) throw InputError(source, path.empty() ? "(top level)" : path, "must be an object");
  json msg = json::object();
  for (const auto& [key, v] : j.items()) {
    const as::Field* f = m.by_json_name(key);
    const std::string where = as::child_path(path, key);
    if (f == nullptr) throw InputError(source, where, std::string("unknown field of ") + m.name);
    if (v.is_null()) continue;  // protobuf's JSON: null is the default
    if (f->repeated) {
      if (!v.is_array()) throw InputError(source, where, "must be an array");
      for (size_t i = 0; i < v.size(); ++i) {
        const std::string at = where + "[" + std::to_string(i) + "]";
        as::set_field(msg, m, *f,
                      f->kind == as::Kind::message ? message_from_json(v[i], *f->message, source, at, depth + 1)
                                                   : scalar_from_json(v[i], *f, source, at),
                      source, at);
      }
      if (v.empty()) msg[f->name] = json::array();
    } else {
      as::set_field(msg, m, *f,
                    f->kind == as::Kind::message ? message_from_json(v, *f->message, source, where, depth + 1)
                                                 : scalar_from_json(v, *f, source, where),
                    source, where);
    }
  }
  return msg;
}

}  // namespace

json parse_autodist_json(const json& j, const std::string& source) {
  return message_from_json(j, as::strategy_message(), source, "");
}

std::string write_autodist_strategy(const json& tree, AutodistFormat f) {
  switch (f) {
    case AutodistFormat::text: return as::text_form(tree);
    case AutodistFormat::json:  // a name read from a binary file may be invalid UTF-8: replaced, not thrown
      return to_json_names(tree, as::strategy_message()).dump(2, ' ', false, json::error_handler_t::replace) + "\n";
    case AutodistFormat::binary: return as::binary_form(tree);
  }
  return {};
}

json read_autodist_strategy(const std::string& bytes, const std::string& source, AutodistFormat* detected) {
  const size_t first = bytes.find_first_not_of(" \t\r\n");
  AutodistFormat f = AutodistFormat::text;
  if (first != std::string::npos && bytes[first] == '{') {
    f = AutodistFormat::json;
  } else {
    for (char ch : bytes) {
      const auto c = static_cast<unsigned char>(ch);
      if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') {
        f = AutodistFormat::binary;
        break;
      }
    }
  }
  if (detected) *detected = f;
  if (f == AutodistFormat::json) return parse_autodist_json(parse_json_text(bytes, source), source);
  if (f == AutodistFormat::binary) return parse_autodist_binary(bytes, source);
  return parse_autodist_text(bytes, source);
}

}  // namespace autoddl::sync
