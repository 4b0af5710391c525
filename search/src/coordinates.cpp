// Coordinates of the descent: single ops, or with tying the ops at one position of layers
// (Op::block runs) whose op classes match in order; each with its unique terms and neighbouring
// coordinates (see coordinate_descent.hpp).
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <map>
#include <string>

#include "autoddl/search/coordinate_descent.hpp"

namespace autoddl::search {

namespace {

int64_t bits(double x) {
  int64_t b = 0;
  std::memcpy(&b, &x, sizeof b);
  return b;
}

// Everything term_cost reads of a term besides its members and their choices.
std::vector<int64_t> term_fields(const Term& tm) {
  return {static_cast<int64_t>(tm.kind), static_cast<int64_t>(reinterpret_cast<uintptr_t>(tm.info)),
          bits(tm.scale), tm.cross_stage ? 1 : 0, bits(tm.sync_weight), tm.count};
}

// One representative per class of a coordinate's members and terms (see Coordinates): members
// by (op class, stage), unless the op holds memory on another stage; terms by everything
// term_cost reads besides the choices, and per member its coordinate, port and op class.
void reduce_by_class(const CostTables& t, Coordinates& co) {
  co.rop_begin.push_back(0);
  co.rterm_begin.push_back(0);
  for (int k = 0; k < co.size(); ++k) {
    std::map<std::vector<int64_t>, int> op_rep, term_rep;  // key -> index in rops / rterms
    for (int j = co.op_begin[k]; j < co.op_begin[k + 1]; ++j) {
      const int op = co.ops[j];
      std::vector<int64_t> key = {t.class_of(op), t.stage(op)};
      if (!t.op_mem_terms(op).empty()) key.push_back(-1 - op);
      auto [it, fresh] = op_rep.emplace(std::move(key), static_cast<int>(co.rops.size()));
      if (fresh) {
        co.rops.push_back(op);
        co.rop_mult.push_back(0);
      }
      ++co.rop_mult[it->second];
    }
    for (int x = co.term_begin[k]; x < co.term_begin[k + 1]; ++x) {
      const int term = co.terms[x];
      const Term& tm = t.term(term);
      std::vector<int64_t> key = term_fields(tm);
      const int* mem = t.term_members(term);
      const int8_t* ports = t.term_ports(term);
      for (int y = 0; y < tm.count; ++y) {
        key.insert(key.end(), {co.of_op[mem[y]], ports[y], t.class_of(mem[y])});
      }
      auto [it, fresh] = term_rep.emplace(std::move(key), static_cast<int>(co.rterms.size()));
      if (fresh) {
        co.rterms.push_back(term);
        co.rterm_mult.push_back(0);
      }
      ++co.rterm_mult[it->second];
    }
    co.rop_begin.push_back(static_cast<int>(co.rops.size()));
    co.rterm_begin.push_back(static_cast<int>(co.rterms.size()));
  }
}

// Coordinates::op_kind and term_kind (see coordinate_descent.hpp).
void kinds_by_pricing(const CostTables& t, Coordinates& co) {
  std::map<std::vector<int64_t>, int> op_ids, term_ids;
  co.op_kind.assign(t.ops(), 0);
  std::vector<int64_t> key;
  for (int op = 0; op < t.ops(); ++op) {
    key = {t.class_of(op), t.stage(op), t.recomputes_op(op) ? 1 : 0, t.weight_gemm_op(op) ? 1 : 0};
    if (!t.op_mem_terms(op).empty()) key.push_back(-1 - op);
    for (int c = 0; c < t.choices(op); ++c) {
      key.insert(key.end(), {bits(t.node_s(op, c)), bits(t.memory_bytes(op, c)), bits(t.activation_bytes(op, c))});
    }
    co.op_kind[op] = op_ids.emplace(key, static_cast<int>(op_ids.size())).first->second;
  }
  co.term_kind.assign(t.terms(), 0);
  for (int term = 0; term < t.terms(); ++term) {
    const Term& tm = t.term(term);
    key = term_fields(tm);
    if (tm.kind == TermKind::tied) key.push_back(-1 - term);
    const int* mem = t.term_members(term);
    const int8_t* ports = t.term_ports(term);
    for (int y = 0; y < tm.count; ++y) key.insert(key.end(), {co.op_kind[mem[y]], ports[y]});
    co.term_kind[term] = term_ids.emplace(key, static_cast<int>(term_ids.size())).first->second;
  }
}

}  // namespace

Coordinates make_coordinates(const CostTables& t, bool tie_layers) {
  const auto& g = t.graph();
  const int n = t.ops();
  std::vector<std::vector<int>> groups;
  std::vector<int> group_of(n, -1);
  if (tie_layers) {
    // Blocks in order of first appearance, each with its ops.
    std::map<std::string, int> block_id;
    std::vector<std::vector<int>> block_ops;
    for (int i = 0; i < n; ++i) {
      const std::string& b = g.ops[i].block;
      if (b.empty()) continue;
      auto [it, fresh] = block_id.emplace(b, static_cast<int>(block_ops.size()));
      if (fresh) block_ops.emplace_back();
      block_ops[it->second].push_back(i);
    }
    std::map<std::vector<int>, std::vector<int>> by_structure;  // class sequence -> blocks
    for (size_t b = 0; b < block_ops.size(); ++b) {
      std::vector<int> key;
      for (int op : block_ops[b]) key.push_back(t.class_of(op));
      by_structure[key].push_back(static_cast<int>(b));
    }
    for (const auto& [key, blocks] : by_structure) {
      if (blocks.size() < 2) continue;
      for (size_t p = 0; p < key.size(); ++p) {
        std::vector<int> members;
        for (int b : blocks) members.push_back(block_ops[b][p]);
        for (int op : members) group_of[op] = static_cast<int>(groups.size());
        groups.push_back(std::move(members));
      }
    }
  }
  for (int i = 0; i < n; ++i) {
    if (group_of[i] < 0) {
      group_of[i] = static_cast<int>(groups.size());
      groups.push_back({i});
    }
  }
  // Coordinates in topological order of their first op.
  std::sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) { return a[0] < b[0]; });
  Coordinates co;
  co.of_op.assign(n, -1);
  co.op_begin.push_back(0);
  for (size_t k = 0; k < groups.size(); ++k) {
    for (int op : groups[k]) {
      co.ops.push_back(op);
      co.of_op[op] = static_cast<int>(k);
    }
    co.op_begin.push_back(static_cast<int>(co.ops.size()));
    if (groups[k].size() > 1) ++co.tied_groups;
  }
  std::vector<int> stamp(t.terms(), -1), nstamp(groups.size(), -1);
  co.term_begin.push_back(0);
  co.nbr_begin.push_back(0);
  for (int k = 0; k < co.size(); ++k) {
    for (int j = co.op_begin[k]; j < co.op_begin[k + 1]; ++j) {
      int nt = 0;
      const int* terms = t.op_terms(co.ops[j], nt);
      for (int x = 0; x < nt; ++x) {
        const int term = terms[x];
        if (stamp[term] == k) continue;
        stamp[term] = k;
        co.terms.push_back(term);
        const int* mem = t.term_members(term);
        for (int y = 0; y < t.term(term).count; ++y) {
          const int other = co.of_op[mem[y]];
          if (other == k || nstamp[other] == k) continue;
          nstamp[other] = k;
          co.nbrs.push_back(other);
        }
      }
    }
    co.term_begin.push_back(static_cast<int>(co.terms.size()));
    co.nbr_begin.push_back(static_cast<int>(co.nbrs.size()));
  }
  if (co.tied_groups > 0) reduce_by_class(t, co);
  kinds_by_pricing(t, co);
  return co;
}

}  // namespace autoddl::search
