// Shared CLI helpers (see cli_util.hpp).
#include "cli_util.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <charconv>
#include <climits>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/graph_json.hpp"
#include "autoddl/costmodel/mesh.hpp"
#include "autoddl/costmodel/io.hpp"
#include "autoddl/costmodel/zoo.hpp"
#include "autoddl/sync/workload.hpp"

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
  if (!(bytes >= 1)) throw InputError(flag, "", "size must be at least 1 byte (got '" + text + "')");
  if (bytes > 0x1p60) throw InputError(flag, "", "size must be at most 2^60 bytes (got '" + text + "')");
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

std::string memory_reserve_words(const costmodel::CostReport& r) {
  char buf[200];
  if (r.memory_reserve_bytes > 0) {
    std::snprintf(buf, sizeof buf,
                  "left of the %.1f GB usable (the GPU's %.1f GB less its %.1f GB reserve: driver, CUDA context, NCCL "
                  "buffers)",
                  r.memory_capacity_bytes / 1e9, (r.memory_capacity_bytes + r.memory_reserve_bytes) / 1e9,
                  r.memory_reserve_bytes / 1e9);
  } else {
    std::snprintf(buf, sizeof buf, "left of the GPU's %.1f GB (the cluster sets no gpu.memory_reserve_bytes)",
                  r.memory_capacity_bytes / 1e9);
  }
  return buf;
}

std::string human_seconds(double s) {
  char buf[32];
  if (s >= 1) std::snprintf(buf, sizeof buf, "%.3f s", s);
  else if (s >= 1e-3) std::snprintf(buf, sizeof buf, "%.3f ms", s * 1e3);
  else std::snprintf(buf, sizeof buf, "%.3f us", s * 1e6);
  return buf;
}

void print_note(const std::string& text) { std::cerr << "autoddl: note: " << text << "\n"; }

void emit_json(const nlohmann::json& j, const std::string& file) {
  if (file.empty()) std::cout << dump_json(j, 2) << "\n";
  else write_json_atomic(file, j);
}

namespace {
// --model names a graph file rather than a zoo model.
bool is_graph_file(const std::string& model) { return model.size() > 5 && model.substr(model.size() - 5) == ".json"; }
}  // namespace

costmodel::Graph load_model(const std::string& model, const std::string& knobs) {
  if (is_graph_file(model)) {
    if (!knobs.empty()) throw InputError("--set", "", "knobs apply to zoo models, not to a graph file");
    return costmodel::load_graph_file(model);
  }
  return costmodel::build_zoo_model(model, costmodel::parse_knob_list(knobs));
}

SyncModel load_sync_model(const std::string& model, const std::string& knobs, const costmodel::ClusterSpec& cluster) {
  if (is_graph_file(model)) return {load_model(model, knobs), {}};
  const sync::SyncWorkload w = sync::sync_workload(model, costmodel::parse_knob_list(knobs), cluster);
  SyncModel m{costmodel::build_zoo_model(model, w.knobs), w.knobs};
  if (!w.note.empty()) print_note(w.note);
  return m;
}

costmodel::SchemedModel load_schemed_model(const std::string& model, const std::string& knobs,
                                           const std::string& spec, const costmodel::ClusterSpec& cluster,
                                           const std::string& mesh) {
  const std::vector<int> mesh_shape = mesh.empty() ? std::vector<int>{} : costmodel::parse_mesh_shape(mesh);
  costmodel::SchemedModel m =
      costmodel::make_schemed_model(load_model(model, knobs), model, knobs, spec, cluster, mesh_shape);
  if (!m.note.empty()) print_note(m.note);
  return m;
}

CLI::Validator non_negative_integer() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) {
          return "must be a non-negative integer (got '" + safe_text(text, 40) + "')";
        }
        uint64_t v = 0;
        if (!parses_whole(text, v)) return "must be at most 18446744073709551615 (got '" + safe_text(text, 40) + "')";
        return "";
      },
      "");
}

CLI::Validator integer_at_least(int min) {
  return CLI::Validator(
      [min](std::string& text) -> std::string {
        int v = 0;
        if (!parses_whole(text, v) || v < min) {
          return "must be an integer in [" + std::to_string(min) + ", " + std::to_string(INT_MAX) + "] (got '" +
                 safe_text(text, 40) + "')";
        }
        return "";
      },
      "");
}

void check_int_options(CLI::App& app) {
  for (CLI::Option* o : app.get_options()) {
    if (o->get_type_name() == "INT") o->check(integer_at_least(INT_MIN));
  }
  for (CLI::App* sub : app.get_subcommands({})) check_int_options(*sub);
}

costmodel::NcclRestriction parse_nccl_restriction(const std::string& algo, const std::string& proto) {
  costmodel::NcclRestriction only;
  if (!algo.empty() && !(only.algo = costmodel::parse_nccl_algo(algo))) {
    throw InputError("--nccl-algo", algo, "must be ring, tree, nvls, nvls_tree or pat (NCCL_ALGO's names)");
  }
  if (!proto.empty() && !(only.proto = costmodel::parse_nccl_proto(proto))) {
    throw InputError("--nccl-proto", proto, "must be LL, LL128 or Simple (NCCL_PROTO's names)");
  }
  return only;
}

CLI::Validator finite_at_least(double min) {
  return CLI::Validator(
      [min](std::string& text) -> std::string {
        double v = 0;
        if (!parses_whole(text, v) || !std::isfinite(v) || v < min) {
          char bound[32];
          std::snprintf(bound, sizeof bound, "%g", min);
          return std::string("must be a finite number >= ") + bound + " (got '" + safe_text(text, 40) + "')";
        }
        return "";
      },
      "");
}

void add_model_options(CLI::App& sub, std::string& model, std::string& knobs) {
  sub.add_option("--model", model, "Zoo model (see `autoddl models`) or a graph JSON file")->required();
  sub.add_option("--set", knobs, "Model knobs, e.g. layers=24,hidden=2048,batch=64");
}

void add_cluster_options(CLI::App& sub, std::string& cluster, std::optional<int>& nodes, std::string* mesh) {
  sub.add_option("--cluster", cluster, "Cluster preset name or cluster JSON file")->required();
  sub.add_option("--nodes", nodes, "Override the preset's node count");
  if (mesh) sub.add_option("--mesh", *mesh, "Device mesh, e.g. 4x8 or 32 (default: nodes x GPUs per node)");
}

void add_scheme_option(CLI::App& sub, std::string& scheme) {
  sub.add_option("--scheme", scheme,
                 "dp | zero1 | zero3 | owt | megatron:tp=T,pp=P,dp=D[,mb=M][,interleave=V][,sp=0|1]"
                 "[,recompute=none|selective|full] | a scheme JSON file")
      ->required();
}

int run_logged(const std::vector<std::string>& argv, const std::string& log) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid;
  int rc = posix_spawn(&pid, args[0], &fa, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) < 0) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

}  // namespace autoddl::cli
