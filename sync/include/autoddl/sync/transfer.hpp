// Transfer of a learned ranker across (model, cluster) pairs (AutoSync §5.3; issue 15 item 7):
// train on the records of some pairs, test on others. Each test pair's records are shuffled
// (seeded by the pair) and its first `finetune` become the "few target trials"; every variant is
// scored on the rest, so all numbers of a row come from the same records:
// * transferred: the ranker trained on the source pairs only (zero-shot);
// * target only: a ranker trained on the `finetune` target trials alone;
// * ensemble: both rankers' scores standardized and added (the low-shot search's default use of
//   a pretrained model, lowshot.hpp), so the source's knowledge and the target's trials both
//   count; two models, neither trained on the other's data (before issue 32 item 4 this row
//   was called "fine-tuned");
// * fine-tuned: what AutoSync means: the source ranker itself trained further on the target
//   trials (Ranker::fine_tune: the linear one's weights from the source's with an L2 pull toward
//   them, XGBoost's trees continued with more rounds).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "autoddl/sync/training.hpp"

namespace autoddl::sync {

struct TransferResult {
  size_t train_records = 0, test_records = 0, finetune_records = 0;
  std::vector<std::string> train_pairs, test_pairs;
  PairMetrics transferred;
  PairMetrics target_only;  // empty (pairs == 0) when finetune == 0
  PairMetrics ensemble;     // likewise
  PairMetrics finetuned;    // likewise
};

// Throws InputError("--train"/"--test", "", reason) when a side matches no pair or a pair
// matches both sides.
TransferResult transfer(const std::vector<LabeledRecord>& records, const std::string& train_patterns,
                        const std::string& test_patterns, int finetune, const std::string& ranker,
                        uint64_t seed);

}  // namespace autoddl::sync
