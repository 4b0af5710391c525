// AutoDist strategies in protobuf's binary wire format (AutoDist's Strategy.serialize() writes
// SerializeToString() to a file; the AutoSync dataset's strategies/<ID> files are these). Only
// what strategy.proto uses: varints (wire type 0) for bool, int32 and enums, length-delimited
// (wire type 2) for strings and messages. The writer emits fields in number order and leaves out
// proto3 defaults, as protobuf does, so its bytes equal Python's for the same message.
#include <climits>
#include <cstdint>
#include <map>

#include "autodist_schema.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/sync/autodist_proto.hpp"

namespace autoddl::sync {

using nlohmann::json;
namespace as = autodist_schema;

namespace {

void put_varint(std::string& out, uint64_t v) {
  while (v >= 0x80) {
    out += static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  out += static_cast<char>(v);
}

void put_tag(std::string& out, int number, int wire_type) {
  put_varint(out, (static_cast<uint64_t>(number) << 3) | static_cast<uint64_t>(wire_type));
}

std::string encode(const json& msg, const as::Message& m) {
  std::string out;
  for (const as::Field& f : m.fields) {
    if (!msg.contains(f.name)) continue;
    const json& v = msg.at(f.name);
    const json list = f.repeated ? v : json::array({v});
    for (const json& e : list) {
      switch (f.kind) {
        case as::Kind::message: {
          // A present message is written even when empty: it may be a oneof member.
          const std::string body = encode(e, *f.message);
          put_tag(out, f.number, 2);
          put_varint(out, body.size());
          out += body;
          break;
        }
        case as::Kind::string: {
          const std::string& s = e.get_ref<const std::string&>();
          if (s.empty() && !f.repeated) break;
          put_tag(out, f.number, 2);
          put_varint(out, s.size());
          out += s;
          break;
        }
        case as::Kind::boolean:
          if (!e.get<bool>()) break;
          put_tag(out, f.number, 0);
          put_varint(out, 1);
          break;
        case as::Kind::int32: {
          const int v32 = e.get<int>();
          if (v32 == 0) break;
          put_tag(out, f.number, 0);
          put_varint(out, static_cast<uint64_t>(static_cast<int64_t>(v32)));  // negatives: 10 bytes
          break;
        }
        case as::Kind::enumeration: {
          size_t k = 0;
          while (k < f.enum_names.size() && e.get<std::string>() != f.enum_names[k]) ++k;
          if (k == 0) break;
          put_tag(out, f.number, 0);
          put_varint(out, k);
          break;
        }
      }
    }
  }
  return out;
}

class WireReader {
 public:
  WireReader(const std::string& bytes, std::string source) : b_(bytes), source_(std::move(source)) {}

  json read() { return message(as::strategy_message(), 0, b_.size(), "", 0); }

 private:
  const std::string& b_;
  std::string source_;

  [[noreturn]] void fail(size_t at, const std::string& where, const std::string& reason) const {
    throw InputError(source_, "byte " + std::to_string(at) + (where.empty() ? "" : ": " + where), reason);
  }

  uint64_t varint(size_t& i, size_t end, const std::string& where) const {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (i >= end) fail(i, where, "truncated varint");
      const auto c = static_cast<unsigned char>(b_[i++]);
      v |= static_cast<uint64_t>(c & 0x7f) << shift;
      if (!(c & 0x80)) return v;
    }
    fail(i, where, "varint longer than 10 bytes");
  }

  json message(const as::Message& m, size_t i, size_t end, const std::string& path, int depth) {
    if (depth > as::kMaxDepth) fail(i, path, "messages nested more than " + std::to_string(as::kMaxDepth) + " deep");
    json msg = json::object();
    std::map<std::string, int> counts;
    while (i < end) {
      const size_t start = i;
      const uint64_t tag = varint(i, end, path);
      const int number = static_cast<int>(tag >> 3), wire = static_cast<int>(tag & 7);
      const as::Field* f = tag >> 3 <= INT_MAX ? m.by_number(number) : nullptr;
      if (f == nullptr) fail(start, path, "unknown field number " + std::to_string(tag >> 3) + " in " + m.name);
      std::string where = as::child_path(path, f->name);
      if (f->repeated) where += "[" + std::to_string(counts[f->name]++) + "]";
      const int want = (f->kind == as::Kind::string || f->kind == as::Kind::message) ? 2 : 0;
      if (wire != want)
        fail(start, where, "wire type " + std::to_string(wire) + ", expected " + std::to_string(want));
      json value;
      if (want == 2) {
        const uint64_t len = varint(i, end, where);
        if (len > end - i) fail(i, where, "length " + std::to_string(len) + " runs past the end");
        value = f->kind == as::Kind::message ? message(*f->message, i, i + len, where, depth + 1) : json(b_.substr(i, len));
        i += len;
      } else {
        const uint64_t v = varint(i, end, where);
        if (f->kind == as::Kind::boolean) {
          value = v != 0;
        } else if (f->kind == as::Kind::int32) {
          const auto s = static_cast<int64_t>(v);
          if (s < INT_MIN || s > INT_MAX) fail(start, where, "not an int32");
          value = static_cast<int>(s);
        } else {
          if (v >= f->enum_names.size())
            fail(start, where, "enum value " + std::to_string(v) + " is not in " + f->name + "'s enum");
          value = f->enum_names[v];
        }
      }
      as::set_field(msg, m, *f, std::move(value), source_, "byte " + std::to_string(start) + ": " + where);
    }
    return msg;
  }
};

}  // namespace

std::string autodist_schema::binary_form(const json& tree) { return encode(tree, strategy_message()); }

json parse_autodist_binary(const std::string& bytes, const std::string& source) {
  return WireReader(bytes, source).read();
}

}  // namespace autoddl::sync
