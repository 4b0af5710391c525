// LinearRanker (ranker.hpp): RankNet's pairwise logistic loss on a linear score.
#include <Eigen/Dense>
#include <cmath>
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
    const Eigen::Index d = static_cast<Eigen::Index>(train[0].x.size());
    Eigen::MatrixXd X(static_cast<Eigen::Index>(train.size()), d);
    for (size_t i = 0; i < train.size(); ++i) {
      if (static_cast<Eigen::Index>(train[i].x.size()) != d)
        throw InputError("ranker", "train[" + std::to_string(i) + "]", "feature count differs");
      for (Eigen::Index k = 0; k < d; ++k) X(static_cast<Eigen::Index>(i), k) = train[i].x[static_cast<size_t>(k)];
    }
    mean_ = X.colwise().mean();
    std_ = ((X.rowwise() - mean_.transpose()).array().square().colwise().mean()).sqrt();
    for (Eigen::Index k = 0; k < d; ++k) {
      if (!(std_(k) > 0)) std_(k) = 1;  // a constant feature carries no order
    }
    Eigen::MatrixXd Z = standardize(X);
    // D: one row per ordered pair (faster − slower) of the same list.
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
    w_ = Eigen::VectorXd::Zero(d);
    if (pairs.empty()) return;
    Eigen::MatrixXd D(static_cast<Eigen::Index>(pairs.size()), d);
    for (size_t p = 0; p < pairs.size(); ++p)
      D.row(static_cast<Eigen::Index>(p)) = Z.row(static_cast<Eigen::Index>(pairs[p].first)) -
                                             Z.row(static_cast<Eigen::Index>(pairs[p].second));
    const double inv_p = 1.0 / static_cast<double>(pairs.size());
    for (int epoch = 0; epoch < opt_.epochs; ++epoch) {
      // loss = mean log(1 + exp(−D·w)) + l2/2 |w|²; d/dw = −Dᵀ σ(−D·w) / P + l2·w
      Eigen::ArrayXd margin = D * w_;
      Eigen::VectorXd sig = (1.0 / (1.0 + margin.exp())).matrix();
      Eigen::VectorXd grad = -inv_p * (D.transpose() * sig) + opt_.l2 * w_;
      w_ -= opt_.learning_rate * grad;
    }
  }

  std::vector<double> score(const std::vector<RankSample>& samples) const override {
    std::vector<double> out;
    for (const RankSample& s : samples) {
      Eigen::VectorXd x = Eigen::Map<const Eigen::VectorXd>(s.x.data(), static_cast<Eigen::Index>(s.x.size()));
      out.push_back(((x - mean_).array() / std_.array()).matrix().dot(w_));
    }
    return out;
  }

  void save(const std::string& path) const override {
    auto vec = [](const Eigen::VectorXd& v) { return std::vector<double>(v.data(), v.data() + v.size()); };
    write_json_atomic(path, {{"format", "autoddl-sync-linear-ranker"}, {"version", 1},
                             {"mean", vec(mean_)}, {"std", vec(std_)}, {"w", vec(w_)}});
  }

  void load(const std::string& path) override {
    nlohmann::json j = read_json_file(path);
    if (j.value("format", "") != "autoddl-sync-linear-ranker")
      throw InputError(path, "format", "must be \"autoddl-sync-linear-ranker\"");
    auto vec = [&](const char* key) {
      if (!j.contains(key) || !j[key].is_array()) throw InputError(path, key, "must be an array of numbers");
      std::vector<double> v = j[key].get<std::vector<double>>();
      return Eigen::VectorXd(Eigen::Map<Eigen::VectorXd>(v.data(), static_cast<Eigen::Index>(v.size())));
    };
    mean_ = vec("mean");
    std_ = vec("std");
    w_ = vec("w");
    if (std_.size() != mean_.size() || w_.size() != mean_.size())
      throw InputError(path, "w", "mean, std and w must have the same length");
  }

 private:
  Eigen::MatrixXd standardize(const Eigen::MatrixXd& X) const {
    return (X.rowwise() - mean_.transpose()).array().rowwise() / std_.transpose().array();
  }

  LinearRankerOptions opt_;
  Eigen::VectorXd mean_, std_, w_;
};

}  // namespace

std::unique_ptr<Ranker> make_linear_ranker(LinearRankerOptions options) {
  return std::make_unique<LinearRanker>(options);
}

}  // namespace autoddl::sync
