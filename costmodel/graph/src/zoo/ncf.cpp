// NCF / NeuMF (He et al. 2017, "Neural Collaborative Filtering") on MovieLens-1M sizes (6040
// users, 3706 items): a GMF tower (user·item embeddings of `factors` dims, elementwise product)
// and an MLP tower (128-dim user and item embeddings concatenated to 256, then 256-128-64 with
// ReLU, as in the NCF reference code), joined and projected to one logit with a binary
// cross-entropy loss (cross_entropy with one class). MLP layers are blocks "mlp.0", "mlp.1".
#include "models.hpp"

namespace autoddl::costmodel::zoo {

namespace {
constexpr int64_t kMlpInput = 256;                  // concatenated user + item embedding
const std::vector<int64_t> kMlpWidths = {128, 64};  // the dense layers after it

Graph build(const Knobs& k) {
  int64_t users = k.get_int("users"), items = k.get_int("items");
  int64_t factors = k.get_int("factors"), batch = k.get_int("batch");
  DType dtype = model_dtype(k);
  GraphBuilder b("ncf", "zoo:ncf", batch, dtype);
  int user_ids = b.input("users", {batch}, DType::int64);
  int item_ids = b.input("items", {batch}, DType::int64);
  int labels = b.input("labels", {batch}, DType::int64);

  int gmf_user =
      b.embedding("gmf.user_lookup", b.parameter("gmf.user_embedding", {users, factors}), user_ids);
  int gmf_item =
      b.embedding("gmf.item_lookup", b.parameter("gmf.item_embedding", {items, factors}), item_ids);
  int gmf = b.mul("gmf.product", gmf_user, gmf_item);

  int mlp_user = b.embedding("mlp.user_lookup",
                             b.parameter("mlp.user_embedding", {users, kMlpInput / 2}), user_ids);
  int mlp_item = b.embedding("mlp.item_lookup",
                             b.parameter("mlp.item_embedding", {items, kMlpInput / 2}), item_ids);
  int h = b.concat("mlp.concat", {mlp_user, mlp_item});
  for (size_t i = 0; i < kMlpWidths.size(); ++i) {
    b.begin_block("mlp." + std::to_string(i));
    h = b.relu("relu", b.linear("fc", h, kMlpWidths[i]));
    b.end_block();
  }

  int joined = b.concat("neumf.concat", {gmf, h});
  int logit = b.linear("neumf.predict", joined, 1);  // (batch, 1)
  b.cross_entropy("loss", logit, labels);
  return b.finish();
}
}  // namespace

ZooModel ncf_model() {
  return {"ncf",
          "NeuMF (GMF + MLP towers) on MovieLens-1M sizes, binary cross-entropy",
          {{"users", "6040", "number of users (embedding rows)"},
           {"items", "3706", "number of items (embedding rows)"},
           {"factors", "8", "GMF embedding size (predictive factors; MLPerf uses 64)"},
           {"batch", "256", "global batch size (user-item pairs)"},
           {"dtype", "fp32", "parameter and activation dtype"}},
          build};
}

}  // namespace autoddl::costmodel::zoo
