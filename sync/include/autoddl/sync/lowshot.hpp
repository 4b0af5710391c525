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
// search; the result also names the best without compression on either side. `arm` replaces
// the ranking by random picks or the analytical evaluator alone (the ablation of issue 32 item 4),
// and every round's ranking and its accuracy on the picks are recorded (round_stats).
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
  // Which ranking picks each round's runs (issue 32 item 4, "does learning help?"): all arms
  // draw the same candidates (same sampler, same neighbours, same trial budget) and differ only
  // in the order they pick from:
  // * "ranker": AutoSync's loop: round 1 by the analytical evaluator (or --pretrained), later
  //   rounds by `ranker` retrained on every run so far;
  // * "random": a seeded uniform draw from the candidates every round (the ranker is still fitted
  //   from round 2 and scores the random picks, so its accuracy on an unselected sample is
  //   reported, but it picks nothing);
  // * "analytical": every round by the analytical evaluator's iteration time; nothing is learned.
  std::string arm = "ranker";
  std::string pretrained;         // a model file (autoddl sync train); empty: none
  // How rounds >= 2 use the pretrained model: "ensemble": a fresh `ranker` trained on the runs
  // so far, its standardized scores added to the pretrained model's; "finetune": the pretrained
  // model itself trained further on the runs so far (Ranker::fine_tune; `ranker` unused).
  std::string transfer = "ensemble";
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

// One round of the loop: what ranked its candidates and how well the scores ordered its picks.
struct LowShotRound {
  int round = 0;
  std::string ranked_by;     // "analytical", "pretrained", the ranker's name (+"+pretrained"), "random"
  std::string scored_by;     // whose scores `accuracy` is of: ranked_by, or the shadow ranker of the random arm; "" none
  int candidates = 0;        // ranked this round
  int picked = 0;            // run this round
  // Pairwise accuracy of `scored_by`'s scores over the pairs of this round's runs (scored before
  // they ran); -1 when nothing scored them (random round 1) or no pair differs.
  double accuracy = -1;
  int64_t pairs = 0;
  double round_best_s = 0;   // fastest single run of this round
  double best_so_far_s = 0;  // fastest single run so far, builders included
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
  // Held-out check of the learned ranker: pairwise accuracy over the pairs within each round's
  // runs, pooled over the rounds a learned model scored (rounds >= 2, or every round with a
  // pretrained model; in the random arm the shadow ranker's scores of the random picks), each
  // scored before it ran. -1 when no learned model scored any round (the analytical arm).
  double ranker_accuracy_on_picks = -1;
  std::vector<LowShotRound> round_stats;  // one per round, in order
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
