// AutoDist strategies in protobuf's text format (what `print(strategy)` shows and
// text_format.Parse reads): `field: value` for scalars, `field { ... }` for messages, strings
// double-quoted with C escapes, enums by name. The writer puts every field of the tree in field
// number order, two spaces per level. The parser takes what protobuf's does for these messages:
// '#' comments, an optional ':' before '{', '<' '>' as braces, ',' or ';' after a field, single
// or double quotes, adjacent strings concatenated, `[a, b]` lists for repeated fields, true/false
// as t/f/True/False/1/0, enums by name or number. Errors name "line L col C".
#include <cctype>
#include <climits>
#include <cstdint>

#include "autodist_schema.hpp"
#include "autoddl/costmodel/error.hpp"
#include "autoddl/sync/autodist_proto.hpp"

namespace autoddl::sync {

using nlohmann::json;
namespace as = autodist_schema;

namespace {

std::string quote(const std::string& s) {
  static const char* oct = "01234567";
  std::string out = "\"";
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c == 0x7f) {
      out += std::string("\\") + oct[c >> 6] + oct[(c >> 3) & 7] + oct[c & 7];
    } else {
      out += ch;  // UTF-8 passes through, as protobuf's as_utf8 output
    }
  }
  return out + "\"";
}

void write_message(std::string& out, const json& msg, const as::Message& m, int depth) {
  const std::string indent(static_cast<size_t>(depth) * 2, ' ');
  for (const as::Field& f : m.fields) {
    if (!msg.contains(f.name)) continue;
    const json& v = msg.at(f.name);
    const json list = f.repeated ? v : json::array({v});
    for (const json& e : list) {
      if (f.kind == as::Kind::message) {
        out += indent + f.name + " {\n";
        write_message(out, e, *f.message, depth + 1);
        out += indent + "}\n";
      } else if (f.kind == as::Kind::string) {
        out += indent + f.name + ": " + quote(e.get<std::string>()) + "\n";
      } else if (f.kind == as::Kind::boolean) {
        out += indent + f.name + ": " + (e.get<bool>() ? "true" : "false") + "\n";
      } else if (f.kind == as::Kind::int32) {
        out += indent + f.name + ": " + std::to_string(e.get<int>()) + "\n";
      } else {
        out += indent + f.name + ": " + e.get<std::string>() + "\n";
      }
    }
  }
}

// A tokenizer and recursive-descent parser over the schema.
class TextParser {
 public:
  TextParser(const std::string& text, std::string source) : t_(text), source_(std::move(source)) {}

  json parse() {
    return parse_fields(as::strategy_message(), "", '\0', 0);
  }

 private:
  const std::string& t_;
  std::string source_;
  size_t i_ = 0;
  int line_ = 1;
  size_t line_start_ = 0;

  [[noreturn]] void fail(const std::string& reason) const { fail_at(i_, reason); }
  // At byte `at` of the current line (a token's start).
  [[noreturn]] void fail_at(size_t at, const std::string& reason) const {
    throw InputError(source_, "line " + std::to_string(line_) + " col " + std::to_string(at - line_start_ + 1), reason);
  }

  void skip_blank() {
    while (i_ < t_.size()) {
      const char c = t_[i_];
      if (c == '\n') {
        ++line_;
        line_start_ = ++i_;
      } else if (c == ' ' || c == '\t' || c == '\r') {
        ++i_;
      } else if (c == '#') {
        while (i_ < t_.size() && t_[i_] != '\n') ++i_;
      } else {
        break;
      }
    }
  }
  bool at(char c) {
    skip_blank();
    return i_ < t_.size() && t_[i_] == c;
  }
  bool eat(char c) {
    if (!at(c)) return false;
    ++i_;
    return true;
  }
  std::string identifier() {
    skip_blank();
    const size_t start = i_;
    while (i_ < t_.size() && (std::isalnum(static_cast<unsigned char>(t_[i_])) || t_[i_] == '_' || t_[i_] == '-' ||
                              t_[i_] == '.' || t_[i_] == '+'))
      ++i_;
    if (i_ == start) fail(i_ < t_.size() ? std::string("unexpected '") + t_[i_] + "'" : "unexpected end of text");
    return t_.substr(start, i_ - start);
  }
  std::string string_literal() {
    std::string out;
    bool any = false;
    while (at('"') || at('\'')) {  // adjacent literals concatenate
      any = true;
      const char q = t_[i_++];
      while (true) {
        if (i_ >= t_.size() || t_[i_] == '\n') fail("unterminated string");
        char c = t_[i_++];
        if (c == q) break;
        if (c != '\\') {
          out += c;
          continue;
        }
        if (i_ >= t_.size()) fail("unterminated string");
        c = t_[i_++];
        switch (c) {
          case 'n': out += '\n'; break;
          case 't': out += '\t'; break;
          case 'r': out += '\r'; break;
          case 'a': out += '\a'; break;
          case 'b': out += '\b'; break;
          case 'f': out += '\f'; break;
          case 'v': out += '\v'; break;
          case '\\': case '\'': case '"': case '?': out += c; break;
          case 'x': {
            int v = 0, n = 0;
            while (n < 2 && i_ < t_.size() && std::isxdigit(static_cast<unsigned char>(t_[i_]))) {
              v = v * 16 + (std::isdigit(static_cast<unsigned char>(t_[i_])) ? t_[i_] - '0' : (std::tolower(t_[i_]) - 'a' + 10));
              ++i_, ++n;
            }
            if (n == 0) fail("\\x needs a hex digit");
            out += static_cast<char>(v);
            break;
          }
          default:
            if (c >= '0' && c <= '7') {
              int v = c - '0', n = 1;
              while (n < 3 && i_ < t_.size() && t_[i_] >= '0' && t_[i_] <= '7') v = v * 8 + (t_[i_++] - '0'), ++n;
              out += static_cast<char>(v);
            } else {
              fail(std::string("unknown escape \\") + c);
            }
        }
      }
    }
    if (!any) fail("expected a quoted string");
    return out;
  }

  json scalar(const as::Field& f) {
    skip_blank();
    if (f.kind == as::Kind::string) return string_literal();
    const size_t start = i_;
    const std::string word = identifier();
    if (f.kind == as::Kind::boolean) {
      if (word == "true" || word == "True" || word == "t" || word == "1") return true;
      if (word == "false" || word == "False" || word == "f" || word == "0") return false;
      fail_at(start, "'" + word + "' is not true or false");
    }
    auto integer = [&](const std::string& w, int64_t& v) {
      if (w.empty()) return false;
      size_t k = (w[0] == '-' || w[0] == '+') ? 1 : 0;
      if (k == w.size() || w.size() > 12) return false;
      for (size_t p = k; p < w.size(); ++p) {
        if (!std::isdigit(static_cast<unsigned char>(w[p]))) return false;
      }
      v = std::stoll(w);
      return true;
    };
    int64_t v = 0;
    if (f.kind == as::Kind::int32) {
      if (!integer(word, v) || v < INT_MIN || v > INT_MAX) fail_at(start, "'" + word + "' is not an int32");
      return static_cast<int>(v);
    }
    // enumeration: a name or its number
    if (integer(word, v)) {
      if (v < 0 || v >= static_cast<int64_t>(f.enum_names.size()))
        fail_at(start, "enum value " + word + " is not in " + f.name + "'s enum");
      return f.enum_names[static_cast<size_t>(v)];
    }
    for (const char* e : f.enum_names) {
      if (word == e) return e;
    }
    std::string known;
    for (const char* e : f.enum_names) known += (known.empty() ? "" : ", ") + std::string(e);
    fail_at(start, "unknown enum value '" + word + "' for " + f.name + " (known: " + known + ")");
  }

  json message_value(const as::Field& f, const std::string& where, int depth) {
    if (depth >= as::kMaxDepth) fail("messages nested more than " + std::to_string(as::kMaxDepth) + " deep");
    eat(':');
    char close = '}';
    if (eat('<')) {
      close = '>';
    } else if (!eat('{')) {
      fail(std::string("expected '{' to open ") + f.name);
    }
    return parse_fields(*f.message, where, close, depth + 1);
  }

  // Fields up to `close` ('\0': the end of the text).
  json parse_fields(const as::Message& m, const std::string& path, char close, int depth) {
    json msg = json::object();
    while (true) {
      skip_blank();
      if (close == '\0' ? i_ >= t_.size() : eat(close)) break;
      if (i_ >= t_.size()) fail(std::string("unexpected end of text: '") + close + "' missing");
      const int field_line = line_;
      const std::string name = identifier();
      const as::Field* f = m.by_name(name);
      if (f == nullptr) fail("unknown field '" + name + "' of " + m.name);
      const std::string where = as::child_path(path, name);
      const std::string line_where = "line " + std::to_string(field_line) + ": " + where;
      if (f->kind == as::Kind::message) {
        if (f->repeated && (skip_blank(), eat(':'), at('['))) {
          eat('[');
          if (!eat(']')) {
            do {
              as::set_field(msg, m, *f, message_value(*f, where, depth), source_, line_where);
            } while (eat(','));
            if (!eat(']')) fail("expected ']'");
          }
        } else {
          as::set_field(msg, m, *f, message_value(*f, where, depth), source_, line_where);
        }
      } else {
        if (!eat(':')) fail("expected ':' after " + name);
        if (f->repeated && eat('[')) {
          if (!eat(']')) {
            do {
              as::set_field(msg, m, *f, scalar(*f), source_, line_where);
            } while (eat(','));
            if (!eat(']')) fail("expected ']'");
          }
        } else {
          as::set_field(msg, m, *f, scalar(*f), source_, line_where);
        }
      }
      if (!eat(',')) eat(';');
    }
    return msg;
  }
};

}  // namespace

std::string autodist_schema::text_form(const json& tree) {
  std::string out;
  write_message(out, tree, strategy_message(), 0);
  return out;
}

json parse_autodist_text(const std::string& text, const std::string& source) {
  return TextParser(text, source).parse();
}

}  // namespace autoddl::sync
