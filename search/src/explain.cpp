// Per-layer rows of a scheme's choices and their diff against a reference (see explain.hpp).
#include "autoddl/search/explain.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

namespace autoddl::search {

using namespace costmodel;

namespace {

struct Raw {
  std::string label, choice;
  double compute_s = 0, boxing_s = 0, sync_s = 0;
};

std::string short_name(const Op& op) { return op.name.substr(op.block.empty() ? 0 : op.block.size() + 1); }

// An op's weights (not biases or norms) as used, @storage where stored otherwise.
std::string weights_of(const Scheme& s, const Graph& g, size_t i) {
  const Op& op = g.ops[i];
  std::string w;
  for (size_t k = 0; k < op.inputs.size(); ++k) {
    const Tensor& t = g.tensors[op.inputs[k]];
    if (t.role != TensorRole::parameter || t.shape.size() < 2) continue;
    w += (w.empty() ? "" : " ") + to_string(s.op_sigs[i].in[k]);
    const NdSbp& st = s.param_storage[op.inputs[k]];
    if (!(st == s.op_sigs[i].in[k])) w += "@" + to_string(st);
  }
  return w;
}

// The op ends a row (the last op of a layer, or an op outside layers): its output SBP is shown.
bool ends_row(const Graph& g, size_t i) {
  const Op& op = g.ops[i];
  return i + 1 == g.ops.size() || g.ops[i + 1].block != op.block || op.block.empty();
}

// One row per run of ops with one block label (every op outside a block is its own row); under
// an interleaved schedule the labels carry no stage (consecutive layers alternate stages).
std::vector<Raw> raw_rows(const Scheme& s, const CostReport& rep, const Graph& g) {
  std::vector<Raw> rows;
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const Op& op = g.ops[i];
    std::string label = op.block.empty() ? "(" + op.name + ")" : op.block;
    if (s.stages() > 1 && s.virtual_stages <= 1) label = "[stage " + std::to_string(rep.per_op[i].stage) + "] " + label;
    if (rows.empty() || op.block.empty() || rows.back().label != label) rows.push_back({label, ""});
    Raw& row = rows.back();
    const OpCostRow& c = rep.per_op[i];
    row.compute_s += c.compute_s;
    row.boxing_s += c.boxing_s;
    row.sync_s += c.grad_sync_s;
    const std::string w = weights_of(s, g, i);
    if (!w.empty()) row.choice += (row.choice.empty() ? "" : " ") + short_name(op) + ":" + w;
    if (ends_row(g, i) && !op.outputs.empty()) {
      row.choice += std::string(row.choice.empty() ? "" : " ") + "-> " + to_string(s.op_sigs[i].out[0]);
    }
  }
  return rows;
}

// Per op position, the weight and output layouts that differ from the reference's.
std::vector<ExplainChange> changes_of(const Scheme& a, const Scheme& ref, const Graph& g) {
  std::vector<ExplainChange> out;
  std::map<std::tuple<std::string, std::string, std::string>, size_t> at;
  std::map<std::string, int> holders;
  for (const Op& op : g.ops) ++holders[short_name(op)];
  auto add = [&](const Op& op, const std::string& from, const std::string& to) {
    const std::string name = short_name(op);
    auto [it, fresh] = at.emplace(std::make_tuple(name, from, to), out.size());
    if (fresh) out.push_back({name, from, to, 0, holders[name], op.block, op.block});
    ExplainChange& c = out[it->second];
    ++c.count;
    c.last = op.block;
  };
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const Op& op = g.ops[i];
    const std::string wa = weights_of(a, g, i), wr = weights_of(ref, g, i);
    if (wa != wr) add(op, wr, wa);
    if (ends_row(g, i) && !op.outputs.empty() && !(a.op_sigs[i].out[0] == ref.op_sigs[i].out[0])) {
      add(op, "-> " + to_string(ref.op_sigs[i].out[0]), "-> " + to_string(a.op_sigs[i].out[0]));
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const ExplainChange& x, const ExplainChange& y) { return x.count > y.count; });
  return out;
}

double total(const Raw& r) { return r.compute_s + r.boxing_s + r.sync_s; }

std::string stage_of(const std::string& label) {
  return label.rfind("[stage", 0) == 0 ? label.substr(0, label.find(']')) : std::string();
}

std::vector<std::string> config_changes_of(const Scheme& a, const CostReport& ra, const Scheme& b, const CostReport& rb,
                                           const std::string& ref) {
  std::vector<std::string> out;
  auto differ = [&](const std::string& what, const std::string& x, const std::string& y) {
    if (x != y) out.push_back(what + " " + x + " (" + ref + ": " + y + ")");
  };
  differ("mesh", ra.mesh, rb.mesh);
  differ("pipeline stages", std::to_string(a.stages()), std::to_string(b.stages()));
  differ("chunks per stage", std::to_string(std::max(1, a.virtual_stages)), std::to_string(std::max(1, b.virtual_stages)));
  differ("micro-batches", std::to_string(a.micro_batches), std::to_string(b.micro_batches));
  differ("recompute", std::string(recompute_name(a.recompute)), std::string(recompute_name(b.recompute)));
  differ("optimizer state", a.shard_optimizer ? "sharded" : "replicated", b.shard_optimizer ? "sharded" : "replicated");
  if (a.stages() == b.stages() && a.op_chunk != b.op_chunk) out.push_back("another stage partition of the layers");
  return out;
}

// ep and etp as `s` lays out the first grouped GEMM's (E, in, out) weight: the product of the
// SBP dims that split it by expert (S(0)), and of those that split it inside each expert.
std::optional<Explanation::Experts> expert_layout_of(const Scheme& s, const CostReport& r, const Graph& g) {
  const std::vector<int> shape = s.sbp_shape();
  for (size_t i = 0; i < g.ops.size(); ++i) {
    const Op& op = g.ops[i];
    if (op.kind != OpKind::expert_matmul) continue;
    Explanation::Experts e;
    e.experts = g.tensors[op.inputs[1]].shape[0];
    e.all_to_all_exposed_s = r.all_to_all_exposed_s;
    const NdSbp& w = s.op_sigs[i].in[1];
    for (int d = 0; d < w.ndims && d < static_cast<int>(shape.size()); ++d) {
      if (w.dims[d].is_split()) (w.dims[d].axis == 0 ? e.ep : e.etp) *= shape[d];
    }
    return e;
  }
  return std::nullopt;
}

}  // namespace

Explanation explain(const SearchResult& result, const Graph& g, const SearchResult* reference) {
  Explanation e;
  const std::vector<Raw> rows = raw_rows(result.scheme, result.report, g);
  std::vector<Raw> ref;
  if (reference && reference->unavailable.empty() && reference->scheme.op_sigs.size() == g.ops.size()) {
    ref = raw_rows(reference->scheme, reference->report, g);
    if (ref.size() != rows.size()) ref.clear();  // another block structure (cannot happen for one graph)
    e.reference_method = reference->method;
    const CostReport& a = result.report;
    const CostReport& b = reference->report;
    e.iteration_delta_s = a.iteration_s - b.iteration_s;
    e.compute_delta_s = a.compute_s - b.compute_s;
    e.comm_delta_s = a.comm_exposed_s - b.comm_exposed_s;
    e.bubble_delta_s = a.bubble_s - b.bubble_s;
    e.memory_delta_bytes = a.peak_memory_bytes - b.peak_memory_bytes;
    if (!ref.empty()) e.changes = changes_of(result.scheme, reference->scheme, g);
    e.config_changes = config_changes_of(result.scheme, a, reference->scheme, b, reference->method);
  }
  e.experts = expert_layout_of(result.scheme, result.report, g);
  if (e.experts && reference && reference->details.contains("by_expert_layout")) {
    for (const nlohmann::json& row : reference->details["by_expert_layout"]) {
      e.expert_alternatives.push_back({row.at("experts").get<std::string>(), row.at("iteration_s").get<double>(),
                                       row.at("all_to_all_exposed_s").get<double>(), row.at("feasible").get<bool>()});
    }
  }
  e.rows_total = static_cast<int>(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    const Raw& r = rows[i];
    const bool differs = !ref.empty() && ref[i].choice != r.choice;
    e.rows_changed += differs;
    const std::string ref_choice = differs ? ref[i].choice : std::string();
    const double ref_s = differs ? total(ref[i]) : 0;
    // Fold consecutive layers with the same choices (and reference) and, within 0.1%, cost.
    if (!e.rows.empty()) {
      ExplainRow& f = e.rows.back();
      const double a = (f.compute_s + f.boxing_s + f.sync_s) / f.count, b = total(r);
      const bool layer = f.label.back() != ')' && r.label.back() != ')';
      if (f.choice == r.choice && f.reference == ref_choice && layer && stage_of(f.label) == stage_of(r.label) &&
          std::abs(a - b) <= 1e-3 * std::max(a, b)) {
        f.compute_s += r.compute_s;
        f.boxing_s += r.boxing_s;
        f.sync_s += r.sync_s;
        f.reference_s += ref_s;
        f.count += 1;
        f.last = stage_of(r.label).empty() ? r.label : r.label.substr(r.label.find(']') + 2);
        continue;
      }
    }
    e.rows.push_back({r.label, r.label, 1, r.compute_s, r.boxing_s, r.sync_s, r.choice, ref_choice, ref_s, {}});
  }
  for (ExplainRow& row : e.rows) {  // per layer
    row.compute_s /= row.count;
    row.boxing_s /= row.count;
    row.sync_s /= row.count;
    row.reference_s /= row.count;
    row.span = row.count > 1 ? row.label + " .. " + row.last + " (x" + std::to_string(row.count) + ", each)" : row.label;
  }
  return e;
}

}  // namespace autoddl::search
