// Variables as sync sees them: sparsity from the ops that read a parameter, rows touched per
// worker, and the order in which gradients become ready in backward.
#include "autoddl/sync/variables.hpp"

#include <catch2/catch.hpp>

#include "autoddl/costmodel/zoo.hpp"
#include "tiny.hpp"

using namespace autoddl::sync;
using namespace autoddl::costmodel;

namespace {
const Variable& find(const std::vector<Variable>& vars, const std::string& name) {
  for (const Variable& v : vars) {
    if (v.name == name) return v;
  }
  FAIL("no variable " << name);
  throw;
}
}  // namespace

TEST_CASE("an embedding table read only by lookups has a sparse gradient", "[sync][variables]") {
  std::vector<Variable> vars = extract_variables(test::tiny_model());
  REQUIRE(vars.size() == 5);
  const Variable& emb = find(vars, "emb.table");
  CHECK(emb.sparse);
  CHECK(emb.bytes == 64000);
  CHECK(emb.batched_lookups == 32);  // tokens (8, 4), batch 8
  CHECK(emb.replicated_lookups == 0);
  CHECK(emb.rows_touched(1) == 32);  // min(1000, 32)
  CHECK(emb.rows_touched(4) == 8);   // each of 4 replicas sees 2 sequences of 4 tokens
  CHECK_FALSE(find(vars, "fc1.weight").sparse);
  CHECK(find(vars, "fc1.weight").rows_touched(4) == 64);
}

TEST_CASE("NCF's four embedding tables are sparse, its towers dense", "[sync][variables]") {
  std::vector<Variable> vars = extract_variables(build_zoo_model("ncf", {}));
  int sparse = 0;
  for (const Variable& v : vars) sparse += v.sparse ? 1 : 0;
  CHECK(sparse == 4);
  const Variable& users = find(vars, "gmf.user_embedding");
  CHECK(users.sparse);
  // each user id is looked up by both towers' tables, once per sample: batch 256 ids
  CHECK(users.batched_lookups == 256);
  CHECK(users.rows_touched(8) == 32);
}

TEST_CASE("BERT's word embedding is dense (tied to the MLM decoder), position ids replicate",
          "[sync][variables]") {
  std::vector<Variable> vars = extract_variables(build_zoo_model("bert", {}));
  CHECK_FALSE(find(vars, "embeddings.word").sparse);
  const Variable& pos = find(vars, "embeddings.position");
  CHECK(pos.sparse);
  CHECK(pos.replicated_lookups == 512);       // positions (seq): every replica uses all rows
  CHECK(pos.rows_touched(16) == 512);
  const Variable& type = find(vars, "embeddings.token_type");
  CHECK(type.sparse);
  CHECK(type.rows_touched(4) == 2);           // min(2 rows, 8·512/4 ids)
}

TEST_CASE("gradients become ready in reverse layer order", "[sync][variables]") {
  std::vector<Variable> vars = extract_variables(test::tiny_model());
  std::vector<std::string> order;
  for (int i : backward_ready_order(vars)) order.push_back(vars[static_cast<size_t>(i)].name);
  // fc2's bias_add runs after its matmul, so its bias gradient is ready first
  CHECK(order == std::vector<std::string>{"fc2.bias", "fc2.weight", "fc1.bias", "fc1.weight",
                                          "emb.table"});
}
