// Shared CLI helpers (see cli_util.hpp).
#include "cli_util.hpp"

#include <cmath>
#include <cstdio>
#include <iostream>

#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/graph_json.hpp"
#include "autoddl/costmodel/io.hpp"
#include "autoddl/costmodel/zoo.hpp"

namespace autoddl::cli {

int64_t parse_bytes(const std::string& text, const std::string& flag) {
  if (text.empty()) throw InputError(flag, "", "empty size");
  size_t pos = 0;
  double v = 0;
  try {
    v = std::stod(text, &pos);
  } catch (const std::exception&) {
    throw InputError(flag, "", "not a size: '" + text + "' (e.g. 8, 64K, 1M, 8G)");
  }
  std::string suffix = text.substr(pos);
  double mult = 1;
  if (suffix == "" || suffix == "B") mult = 1;
  else if (suffix == "K" || suffix == "KB" || suffix == "KiB") mult = 1024.0;
  else if (suffix == "M" || suffix == "MB" || suffix == "MiB") mult = 1024.0 * 1024;
  else if (suffix == "G" || suffix == "GB" || suffix == "GiB") mult = 1024.0 * 1024 * 1024;
  else if (suffix == "T" || suffix == "TB" || suffix == "TiB") mult = 1024.0 * 1024 * 1024 * 1024;
  else throw InputError(flag, "", "unknown size suffix '" + suffix + "' (use K, M, G, T)");
  double bytes = v * mult;
  if (!(bytes >= 1) || bytes > 9.0e18) {
    throw InputError(flag, "", "size must be at least 1 byte (got '" + text + "')");
  }
  return static_cast<int64_t>(std::llround(bytes));
}

std::string human_count(double v) {
  const char* units[] = {"", "K", "M", "G", "T", "P"};
  int u = 0;
  while (std::fabs(v) >= 1000 && u < 5) {
    v /= 1000;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f" : "%.2f %s", v, units[u]);
  return buf;
}

std::string human_seconds(double s) {
  char buf[32];
  if (s >= 1) std::snprintf(buf, sizeof buf, "%.3f s", s);
  else if (s >= 1e-3) std::snprintf(buf, sizeof buf, "%.3f ms", s * 1e3);
  else std::snprintf(buf, sizeof buf, "%.3f us", s * 1e6);
  return buf;
}

void emit_json(const nlohmann::json& j, const std::string& file) {
  if (file.empty()) std::cout << j.dump(2) << "\n";
  else write_json_atomic(file, j);
}

costmodel::Graph load_model(const std::string& model, const std::string& knobs) {
  if (model.size() > 5 && model.substr(model.size() - 5) == ".json") {
    if (!knobs.empty()) throw InputError("--set", "", "knobs apply to zoo models, not to a graph file");
    return costmodel::load_graph_file(model);
  }
  return costmodel::build_zoo_model(model, costmodel::parse_knob_list(knobs));
}

void add_model_options(CLI::App& sub, std::string& model, std::string& knobs) {
  sub.add_option("--model", model, "Zoo model (see `autoddl models`) or a graph JSON file")->required();
  sub.add_option("--set", knobs, "Model knobs, e.g. layers=24,hidden=2048,batch=64");
}

}  // namespace autoddl::cli
