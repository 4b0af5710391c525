// AutoSync's low-shot search (issue 15 item 6; reference/autosync.md §3 "Search loop"), with
// the SimGrid evaluator (simulated.hpp) as the "real run": every round draws `explore`
// candidates (from the knowledge-guided sampler, and neighbours of the fastest runs), ranks them (round 1: a pretrained model, else
// the analytical evaluator's iteration time, AutoSync's predefined simulator; later rounds: the
// ranker retrained on every run so far), runs the top `per_round` not run yet, and repeats
// until `trials` sampled strategies have run. Every builder runs too and joins the training data
// and the candidate pool, so the best found is never slower than the best builder. Runs jitter
// (seeded), so the final choice re-runs the builders and the best few found `repeats` times
// and compares means. Deterministic for a fixed seed, for any `jobs`. The builders include the
// fp16-compressed ones (horovod-fp16, ddp-fp16), so "best builder" has the same options as the
// search; the result also names the best without compression on either side.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "autoddl/costmodel/cluster.hpp"
#include "autoddl/costmodel/graph.hpp"
#include "autoddl/sync/sampler.hpp"
#include "autoddl/sync/strategy.hpp"

namespace autoddl::sync {

struct LowShotOptions {
  int trials = 200;      // sampled strategies run on the simulator (the builders come on top)
  int per_round = 20;    // runs per round: the top of the ranking
  int explore = 400;     // candidates sampled and ranked per round
  uint64_t seed = 1;
  std::string ranker = "linear";  // linear | xgboost
  std::string pretrained;         // a model file (autoddl sync train); empty: none
  int confirm_top = 3;   // best sampled strategies re-run at the end
  int repeats = 3;       // runs per strategy in the final comparison (their mean)
  int jobs = 1;          // simulations in parallel (results do not depend on it)
  // Half of each round's candidates are neighbours of the 5 fastest runs so far (one move on a
  // random share of shards: compressor, PS <-> all-reduce, server, group). AutoSync samples
  // independently per variable, which cannot reach e.g. "every gradient in fp16" (2^-n); the
  // neighbours can. false: AutoSync's sampler only.
  bool mutate = true;
  SamplerOptions sampler;
};

struct LowShotRun {
  Strategy strategy;
  std::string source;     // builder name, or "sampled"
  int round = 0;          // 0 for builders
  double analytical_s = 0;
  double runtime_s = 0;   // one simulated run (jitter seed from the search seed and its index)
  double score = 0;       // the ranking score it was picked with (sampled only)
};

struct LowShotFinal {
  std::string name;       // builder name, or "sampled-<trial>"
  double mean_s = 0;      // mean of `repeats` runs
  bool builder = false;
  bool compressed = false;  // uses a lossy compressor (compression.hpp)
  int run = -1;           // index into runs
};

struct LowShotResult {
  std::vector<LowShotRun> runs;     // builders first, then the sampled trials in run order
  int builders = 0;
  int rounds = 0;
  std::vector<LowShotFinal> finals; // builders and the re-run best found, fastest first
  Strategy best;                    // finals[0]'s strategy
  double best_s = 0;                // finals[0].mean_s
  std::string best_builder;
  double best_builder_s = 0;
  // Compression off (issue 32): the fastest final and the fastest builder without a lossy
  // compressor; best_plain indexes finals. The finals hold the confirm_top fastest uncompressed
  // sampled runs too, so this is as well confirmed as the overall best.
  int best_plain = -1;
  std::string best_plain_builder;
  double best_plain_builder_s = 0;
  // Held-out check of the last ranker: pairwise accuracy on the last round's runs, scored
  // before they ran (how well the model predicted the runs it chose).
  double last_round_accuracy = 0;
  // Per sampled trial n (1-based index n-1): the best mean the search would report if it stopped
  // after n trials (the builders and the final selection of the first n trials, each re-run
  // `repeats` times with the final seeds). Never above the best builder's mean; the last is best_s.
  std::vector<double> trial_curve_s;
};

// `vars` = extract_variables(g). `progress` gets one line per round and stage.
LowShotResult low_shot_search(const costmodel::Graph& g, const std::vector<Variable>& vars,
                              const costmodel::ClusterSpec& c, const LowShotOptions& options,
                              const std::function<void(const std::string&)>& progress = {});

}  // namespace autoddl::sync
