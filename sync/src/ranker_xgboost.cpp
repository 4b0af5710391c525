// XgbRanker (ranker.hpp): XGBoost `rank:pairwise` through the C API. Lists must be contiguous
// rows with a group size each, so samples are sorted by list (stable) and scores mapped back.
// Relevance labels are each sample's rank in its list by runtime (the slowest 0): what
// rank:pairwise compares is only the order of labels within a group.
#ifdef AUTODDL_SYNC_HAVE_XGBOOST
#include <xgboost/c_api.h>

#include <algorithm>
#include <map>
#include <numeric>
#include <cstdio>
#include <limits>

#include "autoddl/costmodel/error.hpp"
#include "autoddl/sync/ranker.hpp"

namespace autoddl::sync {

namespace {

void check(int rc, const char* what) {
  if (rc != 0) throw InputError("xgboost", what, XGBGetLastError());
}

struct Matrix {
  DMatrixHandle h = nullptr;
  std::vector<size_t> order;  // row r is samples[order[r]]
  ~Matrix() {
    if (h) XGDMatrixFree(h);
  }
};

void build_matrix(const std::vector<RankSample>& samples, bool with_labels, Matrix& m) {
  m.order.resize(samples.size());
  std::iota(m.order.begin(), m.order.end(), 0);
  std::stable_sort(m.order.begin(), m.order.end(),
                   [&](size_t a, size_t b) { return samples[a].list < samples[b].list; });
  const size_t d = samples.empty() ? 0 : samples[0].x.size();
  std::vector<float> data;
  data.reserve(samples.size() * d);
  for (size_t i : m.order) {
    if (samples[i].x.size() != d) throw InputError("ranker", "samples", "feature count differs");
    for (double v : samples[i].x) data.push_back(static_cast<float>(v));
  }
  check(XGDMatrixCreateFromMat(data.data(), samples.size(), d, std::numeric_limits<float>::quiet_NaN(), &m.h),
        "DMatrix");
  if (!with_labels) return;
  std::vector<float> labels(samples.size());
  std::vector<unsigned> groups;
  size_t r = 0;
  while (r < m.order.size()) {
    size_t end = r;
    while (end < m.order.size() && samples[m.order[end]].list == samples[m.order[r]].list) ++end;
    std::vector<size_t> rows(end - r);
    std::iota(rows.begin(), rows.end(), r);
    // slowest first: label = position in descending-runtime order; equal runtimes share one
    std::sort(rows.begin(), rows.end(), [&](size_t a, size_t b) {
      return samples[m.order[a]].runtime_s > samples[m.order[b]].runtime_s;
    });
    float label = 0;
    for (size_t k = 0; k < rows.size(); ++k) {
      if (k > 0 && samples[m.order[rows[k]]].runtime_s != samples[m.order[rows[k - 1]]].runtime_s) label += 1;
      labels[rows[k]] = label;
    }
    groups.push_back(static_cast<unsigned>(end - r));
    r = end;
  }
  check(XGDMatrixSetFloatInfo(m.h, "label", labels.data(), labels.size()), "label");
  check(XGDMatrixSetUIntInfo(m.h, "group", groups.data(), groups.size()), "group");
}

class XgbRanker final : public Ranker {
 public:
  explicit XgbRanker(XgbRankerOptions o) : opt_(o) {}
  ~XgbRanker() override { reset(); }

  void fit(const std::vector<RankSample>& train) override {
    if (train.empty()) throw InputError("ranker", "train", "no samples");
    Matrix m;
    build_matrix(train, true, m);
    reset();
    check(XGBoosterCreate(&m.h, 1, &booster_), "create");
    set_params();
    for (int i = 0; i < opt_.rounds; ++i) check(XGBoosterUpdateOneIter(booster_, i, m.h), "train");
  }

  // Continued boosting: the source's trees stay and new ones fit the target lists' residual
  // order (XGBoost predicts the old trees on the new matrix first, as its own training
  // continuation does). Round numbers go on from the source's, so each new tree's sampling
  // differs from the source's trees'.
  void fine_tune(const std::vector<RankSample>& target) override {
    if (!booster_) throw InputError("ranker", "", "fine-tuning needs a fitted or loaded model");
    if (target.empty()) return;
    Matrix m;
    build_matrix(target, true, m);
    set_params();  // a loaded model has its objective; the rest are this ranker's
    int rounds = 0;
    check(XGBoosterBoostedRounds(booster_, &rounds), "boosted rounds");
    for (int i = 0; i < opt_.finetune_rounds; ++i) check(XGBoosterUpdateOneIter(booster_, rounds + i, m.h), "fine-tune");
  }

  std::vector<double> score(const std::vector<RankSample>& samples) const override {
    if (!booster_) throw InputError("ranker", "", "not trained or loaded");
    std::vector<double> out(samples.size());
    if (samples.empty()) return out;
    Matrix m;
    build_matrix(samples, false, m);
    bst_ulong len = 0;
    const float* pred = nullptr;
    check(XGBoosterPredict(booster_, m.h, 0, 0, 0, &len, &pred), "predict");
    for (size_t r = 0; r < m.order.size(); ++r) out[m.order[r]] = pred[r];
    return out;
  }

  void save(const std::string& path) const override {
    if (!booster_) throw InputError("ranker", "", "not trained or loaded");
    // XGBoost writes the file itself; write beside it and rename, so a failure leaves no half file.
    std::string tmp = path + ".tmp.xgb";
    check(XGBoosterSaveModel(booster_, tmp.c_str()), "save");
    if (std::rename(tmp.c_str(), path.c_str()) != 0) throw InputError(path, "", "cannot rename the saved model");
  }

  void load(const std::string& path) override {
    reset();
    check(XGBoosterCreate(nullptr, 0, &booster_), "create");
    if (XGBoosterLoadModel(booster_, path.c_str()) != 0) throw InputError(path, "", XGBGetLastError());
  }

 private:
  void set_params() {
    check(XGBoosterSetParam(booster_, "objective", "rank:pairwise"), "objective");
    check(XGBoosterSetParam(booster_, "max_depth", std::to_string(opt_.max_depth).c_str()), "max_depth");
    check(XGBoosterSetParam(booster_, "eta", std::to_string(opt_.eta).c_str()), "eta");
    check(XGBoosterSetParam(booster_, "min_child_weight", std::to_string(opt_.min_child_weight).c_str()),
          "min_child_weight");
    // rank:pairwise samples num_pairsample pairs per row and round (default 1): more pairs give
    // steadier gradients, so the trees split on what orders the list rather than on noise.
    check(XGBoosterSetParam(booster_, "num_pairsample", std::to_string(opt_.pairs_per_row).c_str()),
          "num_pairsample");
    check(XGBoosterSetParam(booster_, "lambda", std::to_string(opt_.lambda).c_str()), "lambda");
    check(XGBoosterSetParam(booster_, "seed", std::to_string(opt_.seed).c_str()), "seed");
    check(XGBoosterSetParam(booster_, "nthread", "1"), "nthread");  // deterministic
    check(XGBoosterSetParam(booster_, "verbosity", "0"), "verbosity");
  }
  void reset() {
    if (booster_) XGBoosterFree(booster_);
    booster_ = nullptr;
  }

  XgbRankerOptions opt_;
  BoosterHandle booster_ = nullptr;
};

}  // namespace

std::unique_ptr<Ranker> make_xgb_ranker(XgbRankerOptions options) {
  return std::make_unique<XgbRanker>(options);
}

}  // namespace autoddl::sync
#endif
