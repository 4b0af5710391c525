// LinearRanker (ranker.hpp): RankNet's pairwise logistic loss on a linear score of the features
// and of their logarithms. The logs make the score scale-free: a list's strategies are compared
// by ratios (2x the all-reduce time) whatever the model's size, so one weight vector fits lists
// whose times differ by 100x; the raw features keep the additive terms (compute + exposed sync).
#include <Eigen/Dense>
#include <cmath>
#include <algorithm>
#include <cstdio>
#include <map>

#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/io.hpp"
#include "autoddl/sync/ranker.hpp"

namespace autoddl::sync {

namespace {

class LinearRanker final : public Ranker {
 public:
  explicit LinearRanker(LinearRankerOptions o) : opt_(o) {}

  void fit(const std::vector<RankSample>& train) override {
    if (train.empty()) throw InputError("ranker", "train", "no samples");
    const size_t raw = train[0].x.size();
    for (size_t i = 0; i < train.size(); ++i) {
      if (train[i].x.size() != raw)
        throw InputError("ranker", "train[" + std::to_string(i) + "]", "feature count differs");
    }
    // log offset per feature: a millionth of its largest magnitude, so zeros stay finite
    eps_ = Eigen::VectorXd::Zero(static_cast<Eigen::Index>(raw));
    if (opt_.log_features) {
      for (const RankSample& t : train) {
        for (size_t k = 0; k < raw; ++k)
          eps_(static_cast<Eigen::Index>(k)) = std::max(eps_(static_cast<Eigen::Index>(k)), std::abs(t.x[k]));
      }
      eps_ = (eps_ * 1e-6).array() + 1e-300;
    }
    const Eigen::Index d = static_cast<Eigen::Index>(opt_.log_features ? 2 * raw : raw);
    Eigen::MatrixXd X(static_cast<Eigen::Index>(train.size()), d);
    for (size_t i = 0; i < train.size(); ++i) X.row(static_cast<Eigen::Index>(i)) = transform(train[i].x);
    mean_ = X.colwise().mean();
    std_ = ((X.rowwise() - mean_.transpose()).array().square().colwise().mean()).sqrt();
    for (Eigen::Index k = 0; k < d; ++k) {
      if (!(std_(k) > 0)) std_(k) = 1;  // a constant feature carries no order
    }
    w_ = Eigen::VectorXd::Zero(d);
    descend(pair_differences(train), Eigen::VectorXd::Zero(d), opt_.l2, opt_.epochs);
  }

  void fine_tune(const std::vector<RankSample>& target) override {
    if (w_.size() == 0) throw InputError("ranker", "", "fine-tuning needs a fitted or loaded model");
    for (size_t i = 0; i < target.size(); ++i) {
      if (static_cast<Eigen::Index>(target[i].x.size()) != eps_.size())
        throw InputError("ranker", "target[" + std::to_string(i) + "]", "feature count differs from the model's");
    }
    restandardize(target);
    const Eigen::VectorXd source = w_;
    descend(pair_differences(target), source, opt_.finetune_l2, opt_.finetune_epochs);
  }

  std::vector<double> score(const std::vector<RankSample>& samples) const override {
    std::vector<double> out;
    for (const RankSample& s : samples) {
      if (static_cast<Eigen::Index>(s.x.size()) != eps_.size())
        throw InputError("ranker", "features", "the model has " + std::to_string(eps_.size()) + " features, the sample " +
                                                   std::to_string(s.x.size()));
      Eigen::VectorXd x = transform(s.x);
      out.push_back(((x - mean_).array() / std_.array()).matrix().dot(w_));
    }
    return out;
  }

  void save(const std::string& path) const override {
    auto vec = [](const Eigen::VectorXd& v) { return std::vector<double>(v.data(), v.data() + v.size()); };
    write_json_atomic(path, {{"format", "autoddl-sync-linear-ranker"}, {"version", 2},
                             {"log_features", opt_.log_features}, {"eps", vec(eps_)},
                             {"mean", vec(mean_)}, {"std", vec(std_)}, {"w", vec(w_)}});
  }

  void load(const std::string& path) override {
    const nlohmann::json j = read_json_file(path);
    if (!j.is_object() || !j.contains("format") || j["format"] != "autoddl-sync-linear-ranker")
      throw InputError(path, "format", "must be \"autoddl-sync-linear-ranker\"");
    // Magnitudes that keep every score finite (|score term| <= 1e300 for features near 1); a
    // fitted model is far inside them (its std and eps are > 0 by construction).
    auto vec = [&](const char* key, double lo, double hi) {
      if (!j.contains(key) || !j[key].is_array() || j[key].size() > (size_t{1} << 16))
        throw InputError(path, key, "must be an array of at most 65536 numbers");
      Eigen::VectorXd v(static_cast<Eigen::Index>(j[key].size()));
      for (size_t i = 0; i < j[key].size(); ++i) {
        const nlohmann::json& x = j[key][i];
        if (!x.is_number() || !(x.get<double>() >= lo && x.get<double>() <= hi)) {
          throw InputError(path, std::string(key) + "[" + std::to_string(i) + "]",
                           "must be a number in [" + short_number(lo) + ", " + short_number(hi) + "]");
        }
        v(static_cast<Eigen::Index>(i)) = x.get<double>();
      }
      return v;
    };
    mean_ = vec("mean", -1e100, 1e100);
    std_ = vec("std", 1e-100, 1e100);
    w_ = vec("w", -1e100, 1e100);
    if (std_.size() != mean_.size() || w_.size() != mean_.size())
      throw InputError(path, "w", "mean, std and w must have the same length");
    // version 1 files: raw features only
    opt_.log_features = j.contains("log_features") && j["log_features"].is_boolean() && j["log_features"].get<bool>();
    eps_ = j.contains("eps") ? vec("eps", 1e-320, 1e100)
                             : Eigen::VectorXd::Zero(opt_.log_features ? mean_.size() / 2 : mean_.size());
    if (eps_.size() * (opt_.log_features ? 2 : 1) != mean_.size())
      throw InputError(path, "eps", "length does not match mean's");
    if (opt_.log_features && !j.contains("eps")) throw InputError(path, "eps", "missing (log_features is on)");
  }

  static std::string short_number(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%g", v);
    return buf;
  }

 private:
  // Fine-tuning standardizes by the target trials, carrying the source's weights over: a weight
  // w on (x − μ)/σ is w·σ'/σ on (x − μ')/σ' (the same scores up to a constant), so the source's
  // order is kept as the starting point and the L2 prior. Kept in the source's standardization, a
  // feature constant over the source (σ a placeholder 1, w 0) but varying on the target entered
  // the fixed-step descent at its raw scale (bytes or bandwidths of another cluster, ~1e8): the
  // descent diverged and the fine-tuned ranker ordered another cluster's strategies worse than a
  // coin (docs/figures.md, the transfer matrix of 2026-12-07). A feature constant over the target
  // keeps the source's standardization (it cannot reorder the target's strategies).
  void restandardize(const std::vector<RankSample>& target) {
    if (target.size() < 2) return;
    Eigen::MatrixXd X(static_cast<Eigen::Index>(target.size()), mean_.size());
    for (size_t i = 0; i < target.size(); ++i) X.row(static_cast<Eigen::Index>(i)) = transform(target[i].x);
    const Eigen::RowVectorXd mean = X.colwise().mean();
    const Eigen::RowVectorXd sd = ((X.rowwise() - mean).array().square().colwise().mean()).sqrt();
    for (Eigen::Index k = 0; k < mean_.size(); ++k) {
      if (!(sd(k) > 0) || !std::isfinite(sd(k))) continue;
      w_(k) *= sd(k) / std_(k);
      mean_(k) = mean(k);
      std_(k) = sd(k);
    }
  }

  // D: one row per ordered pair (faster − slower) of the same list, of standardized features.
  Eigen::MatrixXd pair_differences(const std::vector<RankSample>& train) const {
    Eigen::MatrixXd X(static_cast<Eigen::Index>(train.size()), mean_.size());
    for (size_t i = 0; i < train.size(); ++i) X.row(static_cast<Eigen::Index>(i)) = transform(train[i].x);
    const Eigen::MatrixXd Z = standardize(X);
    std::map<int, std::vector<size_t>> lists;
    for (size_t i = 0; i < train.size(); ++i) lists[train[i].list].push_back(i);
    std::vector<std::pair<size_t, size_t>> pairs;
    for (const auto& [id, m] : lists) {
      for (size_t a = 0; a < m.size(); ++a) {
        for (size_t b = a + 1; b < m.size(); ++b) {
          if (train[m[a]].runtime_s == train[m[b]].runtime_s) continue;
          bool a_faster = train[m[a]].runtime_s < train[m[b]].runtime_s;
          pairs.emplace_back(a_faster ? m[a] : m[b], a_faster ? m[b] : m[a]);
        }
      }
    }
    Eigen::MatrixXd D(static_cast<Eigen::Index>(pairs.size()), mean_.size());
    for (size_t p = 0; p < pairs.size(); ++p)
      D.row(static_cast<Eigen::Index>(p)) = Z.row(static_cast<Eigen::Index>(pairs[p].first)) -
                                             Z.row(static_cast<Eigen::Index>(pairs[p].second));
    return D;
  }

  // Full-batch gradient descent on mean log(1 + exp(−D·w)) + l2/2 |w − prior|², from w_;
  // d/dw = −Dᵀ σ(−D·w) / P + l2·(w − prior). No pairs: w_ stays.
  void descend(const Eigen::MatrixXd& D, const Eigen::VectorXd& prior, double l2, int epochs) {
    if (D.rows() == 0) return;
    const double inv_p = 1.0 / static_cast<double>(D.rows());
    for (int epoch = 0; epoch < epochs; ++epoch) {
      Eigen::ArrayXd margin = D * w_;
      Eigen::VectorXd sig = (1.0 / (1.0 + margin.exp())).matrix();
      Eigen::VectorXd grad = -inv_p * (D.transpose() * sig) + l2 * (w_ - prior);
      w_ -= opt_.learning_rate * grad;
    }
  }

  // [x, log(max(x, 0) + eps)] with log features on, else x.
  Eigen::RowVectorXd transform(const std::vector<double>& x) const {
    const Eigen::Index raw = static_cast<Eigen::Index>(x.size());
    Eigen::RowVectorXd t(opt_.log_features ? 2 * raw : raw);
    for (Eigen::Index k = 0; k < raw; ++k) {
      t(k) = x[static_cast<size_t>(k)];
      if (opt_.log_features) t(raw + k) = std::log(std::max(0.0, x[static_cast<size_t>(k)]) + eps_(k));
    }
    return t;
  }

  Eigen::MatrixXd standardize(const Eigen::MatrixXd& X) const {
    return (X.rowwise() - mean_.transpose()).array().rowwise() / std_.transpose().array();
  }

  LinearRankerOptions opt_;
  Eigen::VectorXd eps_, mean_, std_, w_;
};

}  // namespace

std::unique_ptr<Ranker> make_linear_ranker(LinearRankerOptions options) {
  return std::make_unique<LinearRanker>(options);
}

}  // namespace autoddl::sync
