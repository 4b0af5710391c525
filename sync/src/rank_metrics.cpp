// Ranking metrics (ranker.hpp): pairwise accuracy and Kendall tau over a list's pairs, top-1
// regret per list.
#include <algorithm>
#include <limits>
#include <map>

#include "autoddl/sync/ranker.hpp"

namespace autoddl::sync {

RankMetrics rank_metrics(const std::vector<RankSample>& samples, const std::vector<double>& scores,
                         double min_gap) {
  std::map<int, std::vector<size_t>> lists;
  for (size_t i = 0; i < samples.size(); ++i) lists[samples[i].list].push_back(i);
  RankMetrics m;
  int64_t concordant = 0, discordant = 0;
  double regret = 0;
  for (const auto& [id, members] : lists) {
    for (size_t a = 0; a < members.size(); ++a) {
      for (size_t b = a + 1; b < members.size(); ++b) {
        size_t i = members[a], j = members[b];
        if (samples[i].runtime_s == samples[j].runtime_s) continue;
        const double lo = std::min(samples[i].runtime_s, samples[j].runtime_s);
        if (std::max(samples[i].runtime_s, samples[j].runtime_s) < lo * (1 + min_gap)) continue;
        bool i_faster = samples[i].runtime_s < samples[j].runtime_s;
        // a tie in score orders nothing: it counts as discordant
        bool agree = i_faster ? scores[i] > scores[j] : scores[j] > scores[i];
        (agree ? concordant : discordant) += 1;
      }
    }
    size_t top = members[0];
    double best = std::numeric_limits<double>::infinity();
    for (size_t i : members) {
      if (scores[i] > scores[top]) top = i;
      best = std::min(best, samples[i].runtime_s);
    }
    regret += samples[top].runtime_s / best - 1;
  }
  m.pairs = concordant + discordant;
  if (m.pairs > 0) {
    m.pairwise_accuracy = static_cast<double>(concordant) / static_cast<double>(m.pairs);
    m.kendall_tau = static_cast<double>(concordant - discordant) / static_cast<double>(m.pairs);
  }
  if (!lists.empty()) m.top1_regret = regret / static_cast<double>(lists.size());
  return m;
}

}  // namespace autoddl::sync
