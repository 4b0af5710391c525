// Learned rankers of strategies (AutoSync §4b): trained on (features, runtime) samples grouped
// in lists (one list = one (model, cluster) pair: only strategies of the same list are
// compared). A higher score means a faster strategy.
// * LinearRanker: score = w·standardize([x, log x]); pairwise logistic loss (RankNet) over the ordered
//   pairs of each list, full-batch gradient descent (Eigen); deterministic.
// * XgbRanker: XGBoost's `rank:pairwise` through its C API (Debian's libxgboost), built only
//   when the library is found (AUTODDL_SYNC_HAVE_XGBOOST); one thread, fixed seed.
// Both save and load (linear: JSON; XGBoost: its own model file), and fine-tune a fitted or
// loaded model on new samples.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace autoddl::sync {

struct RankSample {
  std::vector<double> x;
  double runtime_s = 0;
  int list = 0;
};

class Ranker {
 public:
  virtual ~Ranker() = default;
  virtual void fit(const std::vector<RankSample>& train) = 0;
  virtual std::vector<double> score(const std::vector<RankSample>& samples) const = 0;
  // Fine-tuning (AutoSync §5.3's transfer): continue training this fitted (or loaded) model on
  // `target` samples, starting from what it learned, rather than fitting afresh. Linear: the
  // source's standardization kept, gradient descent from its weights with an L2 pull toward
  // them; XGBoost: more boosting rounds added to the source's trees.
  virtual void fine_tune(const std::vector<RankSample>& target) = 0;
  virtual void save(const std::string& path) const = 0;
  virtual void load(const std::string& path) = 0;
};

struct LinearRankerOptions {
  int epochs = 500;
  double learning_rate = 0.1;
  double l2 = 1e-4;
  // Also the log of every feature (clamped at 0, plus a millionth of its training maximum):
  // ratios within a list then weigh the same for small and large models.
  bool log_features = true;
  // fine_tune: epochs from the source weights, and the L2 strength toward them (a prior: few
  // target trials move the source only where they disagree with it).
  int finetune_epochs = 200;
  double finetune_l2 = 1e-2;
};

std::unique_ptr<Ranker> make_linear_ranker(LinearRankerOptions options = {});
#ifdef AUTODDL_SYNC_HAVE_XGBOOST
struct XgbRankerOptions {
  int rounds = 200;
  int max_depth = 6;
  double eta = 0.3;
  // XGBoost's default 1 stops splits early under rank:pairwise, whose per-row hessians are
  // small (sums of σ(1−σ) over a row's pairs); a smaller bound lets trees separate close runtimes.
  double min_child_weight = 0.01;
  double lambda = 1;  // L2 on leaf weights (XGBoost's default)
  int pairs_per_row = 16;  // XGBoost num_pairsample (default 1)
  int finetune_rounds = 50;  // fine_tune: trees added on the target samples
  uint64_t seed = 0;
};
std::unique_ptr<Ranker> make_xgb_ranker(XgbRankerOptions options = {});
#endif

// Metrics over the pairs of each list with different runtimes; with min_gap > 0 only over the
// pairs whose slower runtime exceeds the faster by at least that fraction (pairs closer than
// the run-to-run noise have no true order to learn). Top-1 regret always uses the whole list.
struct RankMetrics {
  double pairwise_accuracy = 0;  // pairs the scores order as the runtimes do
  double kendall_tau = 0;        // (concordant − discordant) / pairs, averaged over pairs
  double top1_regret = 0;        // mean over lists of runtime(top-scored) / min runtime − 1
  int64_t pairs = 0;
};
RankMetrics rank_metrics(const std::vector<RankSample>& samples, const std::vector<double>& scores,
                         double min_gap = 0);

}  // namespace autoddl::sync
