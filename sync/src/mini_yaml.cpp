// A small YAML reader (mini_yaml.hpp): lines are cut into (indent, text) with comments removed,
// then block mappings and sequences are read by indentation and each value by parse_scalar or,
// for [..] and {..}, by a flow reader over the one line. Scalars resolve as PyYAML's safe_load
// does for what these files hold (ints, floats, true/false/yes/no, null/~).
#include "mini_yaml.hpp"

#include <cctype>
#include <cstdlib>
#include <vector>

#include "autoddl/costmodel/error.hpp"

namespace autoddl::sync {

using nlohmann::json;

namespace {

struct Line {
  int indent;
  std::string text;
  int number;
};

class YamlReader {
 public:
  YamlReader(const std::string& text, std::string source) : source_(std::move(source)) { split(text); }

  json parse() {
    if (lines_.empty()) return nullptr;
    size_t i = 0;
    json v = block(i, lines_[0].indent);
    if (i < lines_.size()) fail(lines_[i].number, "unexpected indentation");
    return v;
  }

 private:
  std::vector<Line> lines_;
  std::string source_;
  int depth_ = 0;  // nesting of blocks and flows being read: bounded, so the stack is

  // Counts one level of nesting for the lifetime of the guard.
  struct Deeper {
    Deeper(YamlReader& r, int line) : r_(r) {
      if (++r_.depth_ > 64) r_.fail(line, "nested more than 64 deep");
    }
    ~Deeper() { --r_.depth_; }
    YamlReader& r_;
  };

  [[noreturn]] void fail(int line, const std::string& reason) const {
    throw InputError(source_, "line " + std::to_string(line), reason);
  }

  void split(const std::string& text) {
    size_t start = 0;
    int number = 0;
    while (start <= text.size()) {
      size_t end = text.find('\n', start);
      if (end == std::string::npos) end = text.size();
      std::string raw = text.substr(start, end - start);
      ++number;
      start = end + 1;
      if (!raw.empty() && raw.back() == '\r') raw.pop_back();
      // Cut a comment: '#' at the start or after a blank, outside quotes.
      char quote = 0;
      for (size_t k = 0; k < raw.size(); ++k) {
        const char c = raw[k];
        if (quote) {
          if (c == quote) quote = 0;
        } else if (c == '"' || c == '\'') {
          quote = c;
        } else if (c == '#' && (k == 0 || raw[k - 1] == ' ' || raw[k - 1] == '\t')) {
          raw.resize(k);
          break;
        }
      }
      while (!raw.empty() && (raw.back() == ' ' || raw.back() == '\t')) raw.pop_back();
      size_t indent = 0;
      while (indent < raw.size() && raw[indent] == ' ') ++indent;
      if (indent == raw.size()) continue;
      if (raw[indent] == '\t') fail(number, "a tab in the indentation (YAML indents with spaces)");
      std::string body = raw.substr(indent);
      if (body == "---" || body == "...") continue;
      if (body.rfind("%", 0) == 0) fail(number, "YAML directives are not supported");
      lines_.push_back({static_cast<int>(indent), body, number});
    }
  }

  static bool is_item(const std::string& t) { return t == "-" || t.rfind("- ", 0) == 0; }

  // Position of the ':' that ends a mapping key ("key: v" or "key:"), outside quotes and flows.
  static size_t key_colon(const std::string& t) {
    char quote = 0;
    int depth = 0;
    for (size_t k = 0; k < t.size(); ++k) {
      const char c = t[k];
      if (quote) {
        if (c == quote) quote = 0;
      } else if ((c == '"' || c == '\'') && (k == 0)) {
        quote = c;
      } else if (c == '[' || c == '{') {
        if (k == 0) return std::string::npos;
        ++depth;
      } else if (c == ']' || c == '}') {
        --depth;
      } else if (c == ':' && depth == 0 && (k + 1 == t.size() || t[k + 1] == ' ')) {
        return k;
      }
    }
    return std::string::npos;
  }

  json block(size_t& i, int indent) {
    const Deeper guard(*this, lines_[i].number);
    if (is_item(lines_[i].text)) return sequence(i, indent);
    if (key_colon(lines_[i].text) != std::string::npos) return mapping(i, indent);
    json v = scalar_or_flow(lines_[i].text, lines_[i].number);
    ++i;
    return v;
  }

  // The value after "key:" or "-" when nothing follows on the line: a deeper block, a sequence
  // at the key's own indentation ("key:\n- a"), or null.
  json nested(size_t& i, int indent, bool allow_same_indent_sequence) {
    if (i < lines_.size() && lines_[i].indent > indent) return block(i, lines_[i].indent);
    if (allow_same_indent_sequence && i < lines_.size() && lines_[i].indent == indent && is_item(lines_[i].text))
      return sequence(i, indent);
    return nullptr;
  }

  json sequence(size_t& i, int indent) {
    json out = json::array();
    while (i < lines_.size() && lines_[i].indent == indent && is_item(lines_[i].text)) {
      Line& l = lines_[i];
      size_t k = 1;
      while (k < l.text.size() && l.text[k] == ' ') ++k;
      if (k == l.text.size()) {
        ++i;
        out.push_back(nested(i, indent, false));
        continue;
      }
      // "- key: v" opens a mapping whose keys sit at the column after "- ".
      const std::string rest = l.text.substr(k);
      if (is_item(rest) || key_colon(rest) != std::string::npos) {
        l.indent += static_cast<int>(k);
        l.text = rest;
        out.push_back(block(i, l.indent));
      } else {
        out.push_back(scalar_or_flow(rest, l.number));
        ++i;
      }
    }
    if (i < lines_.size() && lines_[i].indent > indent) fail(lines_[i].number, "unexpected indentation");
    return out;
  }

  json mapping(size_t& i, int indent) {
    json out = json::object();
    while (i < lines_.size() && lines_[i].indent == indent) {
      const Line& l = lines_[i];
      const size_t colon = key_colon(l.text);
      if (colon == std::string::npos || is_item(l.text)) fail(l.number, "expected 'key: value'");
      json key = scalar_or_flow(l.text.substr(0, colon), l.number);
      const std::string name = key.is_string() ? key.get<std::string>() : key.dump();
      if (out.contains(name)) fail(l.number, "key '" + name + "' given twice");
      size_t k = colon + 1;
      while (k < l.text.size() && l.text[k] == ' ') ++k;
      const int number = l.number;
      ++i;
      out[name] = k == l.text.size() ? nested(i, indent, true) : scalar_or_flow(l.text.substr(k), number);
    }
    if (i < lines_.size() && lines_[i].indent > indent) fail(lines_[i].number, "unexpected indentation");
    return out;
  }

  json scalar_or_flow(const std::string& t, int line) {
    size_t k = 0;
    json v = flow_value(t, k, line, false);
    while (k < t.size() && t[k] == ' ') ++k;
    if (k != t.size()) fail(line, "unexpected text after the value: '" + t.substr(k) + "'");
    return v;
  }

  json flow_value(const std::string& t, size_t& k, int line, bool in_flow) {
    const Deeper guard(*this, line);
    while (k < t.size() && t[k] == ' ') ++k;
    if (k == t.size()) return nullptr;
    const char c = t[k];
    if (c == '&' || c == '*' || c == '!') fail(line, "anchors, aliases and tags are not supported");
    if ((c == '|' || c == '>') && !in_flow) fail(line, "block scalars (| and >) are not supported");
    if (c == '[' || c == '{') {
      const char close = c == '[' ? ']' : '}';
      json out = c == '[' ? json::array() : json::object();
      ++k;
      while (true) {
        while (k < t.size() && t[k] == ' ') ++k;
        if (k >= t.size()) fail(line, std::string("'") + close + "' missing (flow collections must fit on one line)");
        if (t[k] == close) {
          ++k;
          return out;
        }
        json item = flow_value(t, k, line, true);
        while (k < t.size() && t[k] == ' ') ++k;
        if (c == '{') {
          if (k >= t.size() || t[k] != ':') fail(line, "expected ':' in a flow mapping");
          ++k;
          json value = flow_value(t, k, line, true);
          out[item.is_string() ? item.get<std::string>() : item.dump()] = value;
        } else if (k < t.size() && t[k] == ':') {  // [a: b] is a list of one single-pair mapping
          ++k;
          json value = flow_value(t, k, line, true);
          out.push_back(json{{item.is_string() ? item.get<std::string>() : item.dump(), value}});
        } else {
          out.push_back(item);
        }
        while (k < t.size() && t[k] == ' ') ++k;
        // Every item is followed by ',' or the closing bracket: anything else would be read
        // again as an empty item without moving (a 146-byte resource spec grew past 2 GB).
        if (k < t.size() && t[k] == ',') {
          ++k;
        } else if (k < t.size() && t[k] != close) {
          fail(line, std::string("expected ',' or '") + close + "' in a flow collection, found '" + t[k] + "'");
        }
      }
    }
    if (c == '"' || c == '\'') {
      std::string out;
      ++k;
      while (true) {
        if (k >= t.size()) fail(line, "unterminated quoted string");
        const char d = t[k++];
        if (d == c) {
          if (c == '\'' && k < t.size() && t[k] == '\'') {
            out += '\'';
            ++k;
            continue;
          }
          return out;
        }
        if (c == '"' && d == '\\' && k < t.size()) {
          const char e = t[k++];
          out += e == 'n' ? '\n' : e == 't' ? '\t' : e;
          continue;
        }
        out += d;
      }
    }
    // A plain scalar runs to the end (block context) or to , ] } (flow) or ": " in a flow map.
    size_t end = k;
    while (end < t.size()) {
      if (in_flow && (t[end] == ',' || t[end] == ']' || t[end] == '}')) break;
      if (t[end] == ':' && (end + 1 == t.size() || t[end + 1] == ' ')) {
        if (in_flow) break;
      }
      ++end;
    }
    std::string word = t.substr(k, end - k);
    while (!word.empty() && word.back() == ' ') word.pop_back();
    k = end;
    return plain(word);
  }

  static json plain(const std::string& w) {
    if (w.empty() || w == "~" || w == "null" || w == "Null" || w == "NULL") return nullptr;
    for (const char* t : {"true", "True", "TRUE", "yes", "Yes", "YES", "on", "On", "ON"})
      if (w == t) return true;
    for (const char* f : {"false", "False", "FALSE", "no", "No", "NO", "off", "Off", "OFF"})
      if (w == f) return false;
    const char* s = w.c_str();
    char* end = nullptr;
    const bool digits = w.find_first_not_of("+-0123456789") == std::string::npos &&
                        w.find_first_of("0123456789") != std::string::npos;
    if (digits && w.size() < 19) {
      const long long v = std::strtoll(s, &end, 10);
      if (*end == '\0') return v;
    }
    if (w.find_first_of("0123456789") != std::string::npos &&
        w.find_first_not_of("+-0123456789.eE") == std::string::npos) {
      const double v = std::strtod(s, &end);
      if (*end == '\0') return v;
    }
    return w;
  }
};

}  // namespace

json parse_mini_yaml(const std::string& text, const std::string& source) {
  // YAML is Unicode text; a string holding other bytes would later fail where a value is printed
  // in an error (nlohmann's dump throws on invalid UTF-8; a fuzzer input of 2026-12-07).
  try {
    (void)json(text).dump();
  } catch (const json::type_error&) {
    throw InputError(source, "", "not UTF-8 text (YAML files are Unicode)");
  }
  return YamlReader(text, source).parse();
}

}  // namespace autoddl::sync
