// The low-shot loop (lowshot.hpp): sample, rank, run the top few, retrain, repeat.
#ifdef AUTODDL_SYNC_HAVE_SIM
#include "autoddl/sync/lowshot.hpp"

#include <algorithm>
#include <map>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <numeric>
#include <limits>
#include <random>
#include <set>
#include <stdexcept>

#include "autoddl/costmodel/error.hpp"
#include "autoddl/sim/child_pool.hpp"
#include "autoddl/sync/analytical.hpp"
#include "autoddl/sync/builders.hpp"
#include "autoddl/sync/compression.hpp"
#include "autoddl/sync/features.hpp"
#include "autoddl/sync/neighbours.hpp"
#include "autoddl/sync/ranker.hpp"
#include "autoddl/sync/simulated.hpp"
#include "autoddl/sync/stable_hash.hpp"
#include "autoddl/sync/strategy_json.hpp"
#include "autoddl/sync/training.hpp"

namespace autoddl::sync {

namespace {

struct Candidate {
  Strategy s;
  double analytical_s = 0;
  std::vector<double> x;
};

// f(i) for i in [0, n), each in a child process, `jobs` at once (child_pool.hpp says why not
// threads); the doubles come back bit-exact, so results do not depend on `jobs`.
std::vector<double> map_in_children(int n, int jobs, const std::function<double(int)>& f) {
  std::vector<double> out(static_cast<size_t>(n), 0.0);
  sim::for_each_in_children(
      static_cast<size_t>(n), jobs,
      [&](size_t i) {
        const double x = f(static_cast<int>(i));
        std::string bytes(sizeof x, '\0');
        std::memcpy(bytes.data(), &x, sizeof x);
        return bytes;
      },
      [&](size_t i, std::string&& bytes) {
        if (bytes.size() != sizeof(double)) throw std::runtime_error("low-shot: a simulation returned a torn result");
        std::memcpy(&out[i], bytes.data(), sizeof(double));
      });
  return out;
}

// Mean-0, sd-1 scores so that two models' scores can be added.
std::vector<double> zscores(std::vector<double> v) {
  if (v.empty()) return v;
  double mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size()), var = 0;
  for (double x : v) var += (x - mean) * (x - mean);
  const double sd = std::sqrt(var / static_cast<double>(v.size()));
  for (double& x : v) x = sd > 0 ? (x - mean) / sd : 0;
  return v;
}

}  // namespace

LowShotResult low_shot_search(const costmodel::Graph& g, const std::vector<Variable>& vars,
                              const costmodel::ClusterSpec& c, const LowShotOptions& o,
                              const std::function<void(const std::string&)>& progress) {
  // Bounds keep the work finite (each trial is a simulation; explore candidates are all ranked).
  if (o.trials < 1 || o.trials > 100000) throw InputError("--trials", "", "must be from 1 to 100000");
  if (o.per_round < 1 || o.per_round > 10000) throw InputError("--per-round", "", "must be from 1 to 10000");
  if (o.explore < o.per_round || o.explore > 100000)
    throw InputError("--explore", "", "must be from --per-round to 100000");
  if (o.repeats < 1 || o.repeats > 1000) throw InputError("--repeats", "", "must be from 1 to 1000");
  make_ranker(o.ranker, o.seed, "--ranker");  // a bad name fails before any simulation
  if (o.arm != "ranker" && o.arm != "random" && o.arm != "analytical")
    throw InputError("--arm", "", "must be ranker, random or analytical (got '" + o.arm + "')");
  if (o.transfer != "ensemble" && o.transfer != "finetune")
    throw InputError("--transfer", "", "must be ensemble or finetune (got '" + o.transfer + "')");
  if (!o.pretrained.empty() && o.arm != "ranker")
    throw InputError("--pretrained", "", "ranks with the ranker arm only (--arm ranker)");
  check_sync_sim_cluster(c);                  // so does a cluster too large to simulate
  std::unique_ptr<Ranker> pretrained;
  if (!o.pretrained.empty()) pretrained = load_ranker(o.pretrained);
  auto say = [&](const std::string& line) {
    if (progress) progress(line);
  };
  auto simulate = [&](const Strategy& s, uint64_t seed) {
    SimSyncOptions so;
    so.seed = seed;
    return simulate_strategy(g, vars, s, c, so).iteration_s;
  };
  auto candidate = [&](Strategy s) {
    Evaluation e = evaluate_analytical(g, vars, s, c);
    Candidate cd{std::move(s), e.iteration_s, {}};
    cd.x = strategy_features(vars, cd.s, e, c);
    return cd;
  };

  LowShotResult res;
  std::vector<RankSample> data;  // every run so far, one list
  std::set<std::string> seen;    // strategies already run (their JSON)
  auto add_runs = [&](std::vector<Candidate>& picked, const std::vector<double>& scores, const std::string& source,
                      int round) {
    const size_t first = res.runs.size();
    const std::vector<double> runtime = map_in_children(static_cast<int>(picked.size()), o.jobs, [&](int i) {
      return simulate(picked[static_cast<size_t>(i)].s, mix_seed(o.seed, 1, first + static_cast<size_t>(i)));
    });
    for (size_t i = 0; i < picked.size(); ++i) {
      LowShotRun r{picked[i].s, source.empty() ? picked[i].s.builder : source, round, picked[i].analytical_s,
                   runtime[i], scores.empty() ? 0 : scores[i]};
      seen.insert(strategy_to_json(r.strategy).dump());
      data.push_back({picked[i].x, runtime[i], 0});
      res.runs.push_back(std::move(r));
    }
  };

  // The builders: baselines, training data and candidates.
  {
    std::vector<Candidate> b;
    for (const BuilderInfo& info : builders()) b.push_back(candidate(info.build(vars, c)));
    add_runs(b, {}, "", 0);
    res.builders = static_cast<int>(b.size());
    double best = 1e300;
    for (const LowShotRun& r : res.runs) best = std::min(best, r.runtime_s);
    char line[120];
    std::snprintf(line, sizeof line, "builders: %zu run, best %.3f ms", b.size(), best * 1e3);
    say(line);
  }

  int64_t concordant = 0, pairs = 0;
  int done = 0;
  std::unique_ptr<Ranker> model;
  for (int round = 1; done < o.trials; ++round) {
    res.rounds = round;
    std::mt19937_64 rng(mix_seed(o.seed, 2, static_cast<uint64_t>(round)));
    std::vector<Candidate> pool;
    std::set<std::string> in_pool;
    auto offer = [&](Strategy s) {
      std::string key = strategy_to_json(s).dump();
      if (seen.count(key) || !in_pool.insert(key).second) return;  // run already, or drawn twice
      s.id = "sampled";
      pool.push_back(candidate(std::move(s)));
    };
    // Explore: half the pool from AutoSync's sampler. Exploit: the other half neighbours of the
    // 5 fastest runs so far (builders included); the ranker then picks from both halves.
    const int explore_n = o.mutate ? o.explore / 2 : o.explore;
    for (int k = 0; k < explore_n * 4 && static_cast<int>(pool.size()) < explore_n; ++k)
      offer(sample_strategy(vars, c, o.sampler, rng));
    if (o.mutate) {
      std::vector<size_t> fastest(res.runs.size());
      std::iota(fastest.begin(), fastest.end(), 0);
      std::stable_sort(fastest.begin(), fastest.end(),
                       [&](size_t a, size_t b) { return res.runs[a].runtime_s < res.runs[b].runtime_s; });
      fastest.resize(std::min<size_t>(5, fastest.size()));
      std::uniform_int_distribution<size_t> parent(0, fastest.size() - 1);
      for (int k = 0; k < o.explore * 4 && static_cast<int>(pool.size()) < o.explore; ++k) {
        Strategy m;
        if (neighbour_strategy(res.runs[fastest[parent(rng)]].strategy, vars, c, rng, m)) offer(std::move(m));
      }
    }
    if (pool.empty()) {
      say("round " + std::to_string(round) + ": the sampler draws nothing new; stopping");
      break;
    }
    std::vector<RankSample> samples;
    for (const Candidate& cd : pool) samples.push_back({cd.x, 0, 0});
    std::vector<double> score(pool.size(), 0.0);
    std::vector<double> shadow;  // random arm: the ranker's scores, for its accuracy only
    std::string ranked_by;
    auto fit_ranker = [&] {
      model = make_ranker(o.ranker, o.seed, "--ranker");
      model->fit(data);
      return zscores(model->score(samples));
    };
    if (o.arm == "random") {
      // Uniform keys from their own stream, so the sampler's draws match the other arms'.
      std::mt19937_64 keys(mix_seed(o.seed, 4, static_cast<uint64_t>(round)));
      std::uniform_real_distribution<double> u(0.0, 1.0);
      for (double& x : score) x = u(keys);
      ranked_by = "random";
      if (round > 1) shadow = fit_ranker();
    } else if (o.arm == "analytical" || (round == 1 && !pretrained)) {
      for (size_t i = 0; i < pool.size(); ++i) score[i] = -pool[i].analytical_s;  // predefined simulator
      score = zscores(score);
      ranked_by = "analytical";
    } else if (round > 1 && pretrained && o.transfer == "finetune") {
      // The pretrained model trained further on every run so far (from the file each round, so
      // each round fine-tunes the source once on all the target data, not on its own updates).
      model = load_ranker(o.pretrained);
      model->fine_tune(data);
      score = zscores(model->score(samples));
      ranked_by = "pretrained fine-tuned";
    } else if (round > 1) {
      score = fit_ranker();
      ranked_by = o.ranker;
    }
    if (pretrained && ranked_by != "pretrained fine-tuned") {
      std::vector<double> p = zscores(pretrained->score(samples));
      for (size_t i = 0; i < pool.size(); ++i) score[i] += p[i];
      ranked_by = round > 1 ? o.ranker + "+pretrained" : "pretrained";
    }
    std::vector<size_t> order(pool.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return score[a] > score[b]; });
    const int take = std::min({o.per_round, o.trials - done, static_cast<int>(pool.size())});
    std::vector<Candidate> picked;
    std::vector<double> picked_score, judged;  // judged: the scores whose accuracy this round reports
    for (int k = 0; k < take; ++k) {
      const size_t at = order[static_cast<size_t>(k)];
      picked.push_back(pool[at]);
      picked_score.push_back(score[at]);
      if (o.arm != "random") judged.push_back(score[at]);
      else if (!shadow.empty()) judged.push_back(shadow[at]);
    }
    const size_t first = res.runs.size();
    add_runs(picked, picked_score, "sampled", round);
    done += take;
    double round_best = 1e300, overall = 1e300;
    for (size_t i = first; i < res.runs.size(); ++i) round_best = std::min(round_best, res.runs[i].runtime_s);
    for (const LowShotRun& r : res.runs) overall = std::min(overall, r.runtime_s);
    // How the scores ordered what was picked, before the runs: over the pairs within this round.
    LowShotRound st{round, ranked_by, "", static_cast<int>(pool.size()), take, -1, 0, round_best, overall};
    if (!judged.empty()) {
      st.scored_by = o.arm == "random" ? o.ranker : ranked_by;
      int64_t agree = 0;
      for (size_t i = 0; i < judged.size(); ++i) {
        for (size_t j = i + 1; j < judged.size(); ++j) {
          const double ra = res.runs[first + i].runtime_s, rb = res.runs[first + j].runtime_s;
          if (ra == rb) continue;
          ++st.pairs;
          agree += (ra < rb) == (judged[i] > judged[j]) ? 1 : 0;
        }
      }
      if (st.pairs > 0) st.accuracy = static_cast<double>(agree) / static_cast<double>(st.pairs);
      if (st.scored_by != "analytical") {  // a learned model (or the pretrained one) scored them
        concordant += agree;
        pairs += st.pairs;
      }
    }
    res.round_stats.push_back(st);
    char line[240];
    std::snprintf(line, sizeof line, "round %d: %d/%d trials, ranked %zu by %s, round best %.3f ms, best so far %.3f ms",
                  round, done, o.trials, pool.size(),
                  ranked_by == "analytical" ? "the analytical evaluator"
                  : ranked_by == "pretrained" ? "the pretrained model"
                                              : ranked_by.c_str(),
                  round_best * 1e3, overall * 1e3);
    say(line);
  }
  res.ranker_accuracy_on_picks = pairs > 0 ? static_cast<double>(concordant) / static_cast<double>(pairs) : -1;

  // Final comparison: every builder and the confirm_top fastest sampled runs, `repeats` runs each
  // with the same seeds, compared by their means.
  // The sampled runs the final selection re-runs when the search stops after the first n trials:
  // the confirm_top fastest by their one run, and the confirm_top fastest without compression
  // (the "compression off" comparison).
  auto selection = [&](size_t n) {
    std::vector<int> sampled(n);
    std::iota(sampled.begin(), sampled.end(), res.builders);
    std::stable_sort(sampled.begin(), sampled.end(), [&](int a, int b) {
      return res.runs[static_cast<size_t>(a)].runtime_s < res.runs[static_cast<size_t>(b)].runtime_s;
    });
    std::vector<int> picked;
    for (size_t k = 0; k < sampled.size() && k < static_cast<size_t>(o.confirm_top); ++k) picked.push_back(sampled[k]);
    int plain = 0;
    for (size_t k = 0; k < sampled.size() && plain < o.confirm_top; ++k) {
      if (uses_compression(res.runs[static_cast<size_t>(sampled[k])].strategy, vars)) continue;
      ++plain;
      if (k >= static_cast<size_t>(o.confirm_top)) picked.push_back(sampled[k]);
    }
    return picked;
  };
  const size_t n_sampled = res.runs.size() - static_cast<size_t>(res.builders);
  std::vector<int> finalists;
  for (int i = 0; i < res.builders; ++i) finalists.push_back(i);
  for (int r : selection(n_sampled)) finalists.push_back(r);
  // The trial curve (what the search reports if it stops after n trials, for every n) needs the
  // means of every run some prefix's selection picks: re-run those too, after the finalists, so
  // the finals are as before. A best-so-far of single jittered runs would sit below the builders
  // by selection alone.
  std::vector<std::vector<int>> picked_by_prefix(n_sampled);
  std::vector<int> curve_extra;
  for (size_t n = 1; n <= n_sampled; ++n) {
    picked_by_prefix[n - 1] = selection(n);
    for (int r : picked_by_prefix[n - 1])
      if (std::find(finalists.begin(), finalists.end(), r) == finalists.end() &&
          std::find(curve_extra.begin(), curve_extra.end(), r) == curve_extra.end())
        curve_extra.push_back(r);
  }
  const size_t n_finalists = finalists.size();
  finalists.insert(finalists.end(), curve_extra.begin(), curve_extra.end());
  say("final: " + std::to_string(finalists.size()) + " strategies x " + std::to_string(o.repeats) + " runs");
  const std::vector<double> runs_s =
      map_in_children(static_cast<int>(finalists.size()) * o.repeats, o.jobs, [&](int t) {
        const size_t f = static_cast<size_t>(t / o.repeats);
        return simulate(res.runs[static_cast<size_t>(finalists[f])].strategy,
                        mix_seed(o.seed, 3, static_cast<uint64_t>(t % o.repeats)));
      });
  std::vector<double> total(finalists.size(), 0.0);
  for (size_t t = 0; t < runs_s.size(); ++t) total[t / static_cast<size_t>(o.repeats)] += runs_s[t];
  std::map<int, double> mean_of_run;
  for (size_t f = 0; f < finalists.size(); ++f) mean_of_run[finalists[f]] = total[f] / o.repeats;
  finalists.resize(n_finalists);
  for (size_t f = 0; f < finalists.size(); ++f) {
    const LowShotRun& r = res.runs[static_cast<size_t>(finalists[f])];
    const bool builder = finalists[f] < res.builders;
    res.finals.push_back({builder ? r.source : "sampled-" + std::to_string(finalists[f] - res.builders),
                          total[f] / o.repeats, builder, uses_compression(r.strategy, vars), finalists[f]});
  }
  std::stable_sort(res.finals.begin(), res.finals.end(),
                   [](const LowShotFinal& a, const LowShotFinal& b) { return a.mean_s < b.mean_s; });
  res.best = res.runs[static_cast<size_t>(res.finals[0].run)].strategy;
  res.best_s = res.finals[0].mean_s;
  for (const LowShotFinal& f : res.finals) {
    if (f.builder) {
      res.best_builder = f.name;
      res.best_builder_s = f.mean_s;
      break;
    }
  }
  // Builders first (they ran before any trial), then each prefix's selection, by their means:
  // the last point is best_s, so the curve ends at the reported speedup.
  double best_builder_mean = std::numeric_limits<double>::infinity();
  for (int i = 0; i < res.builders; ++i) best_builder_mean = std::min(best_builder_mean, mean_of_run[i]);
  for (size_t n = 0; n < n_sampled; ++n) {
    double best = best_builder_mean;
    for (int r : picked_by_prefix[n]) best = std::min(best, mean_of_run[r]);
    res.trial_curve_s.push_back(best);
  }
  for (size_t f = 0; f < res.finals.size(); ++f) {
    const LowShotFinal& fi = res.finals[f];
    if (fi.compressed) continue;
    if (res.best_plain < 0) res.best_plain = static_cast<int>(f);
    if (fi.builder && res.best_plain_builder.empty()) {
      res.best_plain_builder = fi.name;
      res.best_plain_builder_s = fi.mean_s;
    }
  }
  return res;
}

}  // namespace autoddl::sync
#endif
