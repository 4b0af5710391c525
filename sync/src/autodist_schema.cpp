// AutoDist's Strategy message as a table (autodist_schema.hpp). Enum values are contiguous from 0
// in both enums, so a value's index in enum_names is its number. PowerSGDCompressor (3) is
// commented out in AutoDist's released proto; it is listed so that a file naming it gets the
// mapping's "autoddl cannot price PowerSGD" rather than "unknown enum value".
#include "autodist_schema.hpp"

#include <cctype>

#include "autoddl/costmodel/error.hpp"

namespace autoddl::sync::autodist_schema {

namespace {

// Field rows by kind (aggregate initialization with omitted members would warn).
Field scalar(const char* name, int number, Kind kind, bool repeated = false) {
  return Field{name, number, kind, repeated, nullptr, {}, nullptr};
}
Field enumeration(const char* name, int number, std::vector<const char*> values) {
  return Field{name, number, Kind::enumeration, false, nullptr, std::move(values), nullptr};
}
Field message(const char* name, int number, const Message* m, bool repeated = false, const char* oneof = nullptr) {
  return Field{name, number, Kind::message, repeated, m, {}, oneof};
}

const Message kPs{"PSSynchronizer",
                  {scalar("reduction_destination", 1, Kind::string), scalar("local_replication", 2, Kind::boolean),
                   scalar("sync", 3, Kind::boolean), scalar("staleness", 4, Kind::int32)}};

const Message kAllReduce{
    "AllReduceSynchronizer",
    {enumeration("spec", 1, {"AUTO", "NCCL", "RING"}),
     enumeration("compressor", 2, {"NoneCompressor", "HorovodCompressor", "HorovodCompressorEF", "PowerSGDCompressor"}),
     scalar("group", 3, Kind::int32)}};

const Message kNode{"Node",
                    {scalar("var_name", 1, Kind::string),
                     message("PSSynchronizer", 2, &kPs, false, "synchronizer"),
                     message("AllReduceSynchronizer", 3, &kAllReduce, false, "synchronizer"),
                     scalar("partitioner", 4, Kind::string), message("part_config", 5, &kNode, true)}};

const Message kGraphConfig{"GraphConfig", {scalar("replicas", 1, Kind::string, true)}};

const Message kStrategy{"Strategy",
                        {scalar("id", 1, Kind::string), scalar("path", 2, Kind::string),
                         message("node_config", 3, &kNode, true), message("graph_config", 4, &kGraphConfig)}};

}  // namespace

const Field* Message::by_name(const std::string& n) const {
  for (const Field& f : fields) {
    if (n == f.name) return &f;
  }
  return nullptr;
}

const Field* Message::by_json_name(const std::string& n) const {
  for (const Field& f : fields) {
    if (n == f.name || n == json_name(f.name)) return &f;
  }
  return nullptr;
}

const Field* Message::by_number(int number) const {
  for (const Field& f : fields) {
    if (number == f.number) return &f;
  }
  return nullptr;
}

const Message& strategy_message() { return kStrategy; }

std::string json_name(const char* proto_name) {
  std::string out;
  bool upper = false;
  for (const char* p = proto_name; *p; ++p) {
    if (*p == '_') {
      upper = true;
    } else {
      out += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(*p))) : *p;
      upper = false;
    }
  }
  return out;
}

void set_field(nlohmann::json& msg, const Message& m, const Field& f, nlohmann::json value,
               const std::string& source, const std::string& where) {
  if (!msg.is_object()) msg = nlohmann::json::object();
  if (f.repeated) {
    msg[f.name].push_back(std::move(value));
    return;
  }
  if (msg.contains(f.name)) throw InputError(source, where, "non-repeated field given twice");
  if (f.oneof != nullptr) {
    for (const Field& other : m.fields) {
      if (&other != &f && other.oneof != nullptr && std::string(other.oneof) == f.oneof && msg.contains(other.name)) {
        throw InputError(source, where,
                         std::string("oneof '") + f.oneof + "' already holds " + other.name + " (give one of them)");
      }
    }
  }
  msg[f.name] = std::move(value);
}

std::string child_path(const std::string& parent, const std::string& field) {
  return parent.empty() ? field : parent + "." + field;
}

}  // namespace autoddl::sync::autodist_schema
