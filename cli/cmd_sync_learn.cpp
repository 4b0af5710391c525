// `autoddl sync train|eval|transfer|sequences`: argument parsing and printing around
// sync/training.hpp, transfer.hpp and var_sequence.hpp. train: a held-out split of the
// strategies inside every (model, cluster) list, the ranker fitted on the rest, metrics on both;
// eval: a saved model's metrics; transfer: trained on some pairs, tested on others, with and
// without target trials (zero-shot, target only, ensemble, fine-tuned); sequences: per-variable
// features for the LSTM ranker, which trains in Python (experiments/autosync_rankers.py).
#include "cmd_sync_learn.hpp"

#include <cstdio>
#include <memory>

#include "autoddl/costmodel/error.hpp"
#include "autoddl/costmodel/io.hpp"
#include "autoddl/costmodel/output_files.hpp"
#include "autoddl/sync/training.hpp"
#include "autoddl/sync/transfer.hpp"
#include "autoddl/sync/var_sequence.hpp"
#include "cli_util.hpp"

namespace autoddl::cli {
namespace {

struct LearnOptions {
  std::vector<std::string> data;
  std::string ranker = "linear", out, model_file, json_file, train_pairs, test_pairs, pairs, scores_file;
  int finetune = 0;
  double holdout = 0.2;
  double min_gap = sync::kDefaultMinGap;
  uint64_t seed = 1;
};

nlohmann::json metrics_json(const sync::RankMetrics& m) {
  return {{"pairwise_accuracy", m.pairwise_accuracy}, {"kendall_tau", m.kendall_tau},
          {"top1_regret", m.top1_regret}, {"pairs", m.pairs}};
}

nlohmann::json pair_metrics_json(const sync::PairMetrics& m) {
  nlohmann::json per = nlohmann::json::object(), gap = nlohmann::json::object();
  for (const auto& [pair, pm] : m.per_pair) per[pair] = metrics_json(pm);
  for (const auto& [pair, pm] : m.gap_per_pair) gap[pair] = metrics_json(pm);
  return {{"all", metrics_json(m.all)}, {"per_pair", per}, {"min_gap", m.min_gap},
          {"gap_all", metrics_json(m.gap_all)}, {"gap_per_pair", gap}};
}

void print_row(const std::string& name, const sync::RankMetrics& a, const sync::RankMetrics& g) {
  std::printf("  %-30s %8lld %9.3f %7.3f %8.2f%% %9lld %9.3f\n", name.c_str(), static_cast<long long>(a.pairs),
              a.pairwise_accuracy, a.kendall_tau, 100 * a.top1_regret, static_cast<long long>(g.pairs),
              g.pairwise_accuracy);
}

}  // namespace

void print_metrics_table(const char* title, const sync::PairMetrics& m) {
  char gap[32];
  std::snprintf(gap, sizeof gap, ">=%.0f%% apart", 100 * m.min_gap);
  std::printf("%s\n  %-30s %8s %9s %7s %9s %19s\n", title, "pair", "pairs", "accuracy", "tau", "regret", gap);
  for (const auto& [pair, pm] : m.per_pair) print_row(pair, pm, m.gap_per_pair.at(pair));
  print_row("all", m.all, m.gap_all);
}

namespace {

int run_train(const LearnOptions& o) {
  std::unique_ptr<sync::Ranker> r = sync::make_ranker(o.ranker, o.seed, "--ranker");
  std::vector<sync::LabeledRecord> records = sync::read_records(o.data, o.pairs, print_note), train, test;
  if (records.empty()) throw InputError("--pairs", "", "matches no record of --data");
  sync::split_within_pairs(records, o.holdout, o.seed, train, test);
  if (train.empty()) throw InputError("--data", "", "no training records");
  std::fprintf(stderr, "autoddl sync train: fitting %s on %zu records...\n", o.ranker.c_str(), train.size());
  r->fit(sync::to_samples(train));
  sync::PairMetrics on_train = sync::evaluate_ranker(*r, train, o.min_gap);
  std::vector<double> test_scores = test.empty() ? std::vector<double>{} : r->score(sync::to_samples(test));
  sync::PairMetrics held_out = test.empty() ? sync::PairMetrics{} : sync::pair_metrics(test, test_scores, o.min_gap);
  OutputFiles out;
  out.add_written(o.out, [&](const std::string& tmp) { r->save(tmp); });
  if (!o.scores_file.empty()) {
    std::string csv = "pair,index,builder,runtime_s,score\n";
    char row[96];
    for (size_t i = 0; i < test.size(); ++i) {
      std::snprintf(row, sizeof row, ",%d,%s,%.9g,%.9g\n", test[i].index, test[i].builder.c_str(), test[i].runtime_s,
                    test_scores[i]);
      csv += "\"" + test[i].pair + "\"" + row;
    }
    out.add(o.scores_file, std::move(csv));
  }
  if (!o.json_file.empty()) {
    out.add_json(o.json_file, {{"ranker", o.ranker}, {"data", o.data}, {"holdout", o.holdout}, {"seed", o.seed},
                               {"records", records.size()}, {"train_records", train.size()},
                               {"held_out_records", test.size()}, {"model_file", o.out},
                               {"train", pair_metrics_json(on_train)}, {"held_out", pair_metrics_json(held_out)}});
  }
  out.commit();
  std::printf("autoddl sync train: %s ranker, %zu records (%zu train, %zu held out: %.0f%% of each pair, seed %llu)\n",
              o.ranker.c_str(), records.size(), train.size(), test.size(), 100 * o.holdout,
              static_cast<unsigned long long>(o.seed));
  std::printf("training lists: pairwise accuracy %.3f, Kendall tau %.3f, top-1 regret %.2f%%\n",
              on_train.all.pairwise_accuracy, on_train.all.kendall_tau, 100 * on_train.all.top1_regret);
  if (!test.empty()) print_metrics_table("held out (same pairs, unseen strategies):", held_out);
  std::printf("model written to %s\n", o.out.c_str());
  return 0;
}

int run_eval(const LearnOptions& o) {
  std::string kind;
  std::unique_ptr<sync::Ranker> r = sync::load_ranker(o.model_file, &kind);
  std::vector<sync::LabeledRecord> records = sync::read_records(o.data, o.pairs, print_note);
  if (records.empty()) throw InputError("--pairs", "", "matches no record of --data");
  sync::PairMetrics m = sync::evaluate_ranker(*r, records, o.min_gap);
  if (!o.json_file.empty()) {
    nlohmann::json j = pair_metrics_json(m);
    j["model_file"] = o.model_file;
    j["ranker"] = kind;
    j["data"] = o.data;
    j["records"] = records.size();
    write_json_atomic(o.json_file, j);
  }
  std::printf("autoddl sync eval: %s (%s) on %zu records\n", o.model_file.c_str(), kind.c_str(), records.size());
  print_metrics_table("metrics:", m);
  return 0;
}

int run_transfer(const LearnOptions& o) {
  sync::make_ranker(o.ranker, o.seed, "--ranker");
  std::vector<sync::LabeledRecord> records = sync::read_records(o.data, "", print_note);
  sync::TransferResult t = sync::transfer(records, o.train_pairs, o.test_pairs, o.finetune, o.ranker, o.seed);
  if (!o.json_file.empty()) {
    nlohmann::json j = {{"ranker", o.ranker}, {"data", o.data}, {"train", o.train_pairs}, {"test", o.test_pairs},
                        {"finetune", o.finetune}, {"seed", o.seed}, {"train_pairs", t.train_pairs},
                        {"test_pairs", t.test_pairs}, {"train_records", t.train_records},
                        {"finetune_records", t.finetune_records}, {"test_records", t.test_records},
                        {"transferred", pair_metrics_json(t.transferred)}};
    if (o.finetune >= 2) {
      j["target_only"] = pair_metrics_json(t.target_only);
      j["ensemble"] = pair_metrics_json(t.ensemble);
      j["finetuned"] = pair_metrics_json(t.finetuned);
    }
    write_json_atomic(o.json_file, j);
  }
  std::printf("autoddl sync transfer: %s ranker; train %zu pairs (%zu records) [%s] -> test %zu pairs [%s], "
              "%zu records scored, %d target trials per pair\n",
              o.ranker.c_str(), t.train_pairs.size(), t.train_records, o.train_pairs.c_str(), t.test_pairs.size(),
              o.test_pairs.c_str(), t.test_records, o.finetune);
  char gap[32];
  std::snprintf(gap, sizeof gap, ">=%.0f%% apart", 100 * t.transferred.min_gap);
  std::printf("  %-30s %8s %9s %7s %9s %19s\n", "ranker", "pairs", "accuracy", "tau", "regret", gap);
  print_row("transferred (no target data)", t.transferred.all, t.transferred.gap_all);
  if (o.finetune >= 2) {
    print_row("target trials only", t.target_only.all, t.target_only.gap_all);
    print_row("ensemble (source + target)", t.ensemble.all, t.ensemble.gap_all);
    print_row("source fine-tuned on target", t.finetuned.all, t.finetuned.gap_all);
  } else if (o.finetune == 1) {
    std::printf("  (--finetune 1: one trial orders nothing; give 2 or more)\n");
  }
  return 0;
}

int run_sequences(const LearnOptions& o) {
  const int64_t n = sync::export_sequences(o.data, o.pairs, o.out, print_note);
  std::printf("autoddl sync sequences: %lld records, %zu columns per variable -> %s.json, %s.f32\n",
              static_cast<long long>(n), sync::variable_feature_names().size(), o.out.c_str(), o.out.c_str());
  return 0;
}

}  // namespace

std::function<std::optional<int>()> setup_sync_learn(CLI::App& sub) {
  auto o = std::make_shared<LearnOptions>();
  CLI::App* train = sub.add_subcommand(
      "train", "Train a ranker on dataset records; report held-out accuracy on the same (model, cluster) pairs");
  train->add_option("--data", o->data, "Dataset directories (autoddl sync dataset --out DIR)")->required();
  train->add_option("--ranker", o->ranker, "linear or xgboost")->capture_default_str();
  train->add_option("--out", o->out, "Write the trained model to FILE")->required();
  train->add_option("--holdout", o->holdout, "Fraction of each pair's strategies held out")->capture_default_str();
  train->add_option("--seed", o->seed, "Seed of the split (and of XGBoost)")->capture_default_str()->check(non_negative_integer());
  train->add_option("--json", o->json_file, "Write the metrics as JSON to FILE");
  train->add_option("--scores", o->scores_file,
                    "Write every held-out record's score as CSV to FILE (pair, index, builder, runtime_s, score)");
  CLI::App* eval = sub.add_subcommand("eval", "Ranking metrics of a saved model on dataset records");
  eval->add_option("--data", o->data, "Dataset directories")->required();
  eval->add_option("--model-file", o->model_file, "A model written by autoddl sync train")->required();
  eval->add_option("--json", o->json_file, "Write the metrics as JSON to FILE");
  CLI::App* transfer = sub.add_subcommand(
      "transfer", "Train on some (model, cluster) pairs, test on others, with and without a few target trials");
  transfer->add_option("--data", o->data, "Dataset directories")->required();
  transfer->add_option("--train", o->train_pairs, "Training pairs: model@cluster,... ('*' for any side)")->required();
  transfer->add_option("--test", o->test_pairs, "Test pairs, same form; none may also be a training pair")->required();
  transfer->add_option("--finetune", o->finetune, "Target trials per test pair used for fine-tuning")
      ->capture_default_str();
  transfer->add_option("--ranker", o->ranker, "linear or xgboost")->capture_default_str();
  transfer->add_option("--seed", o->seed, "Seed of the target-trial draw (and of XGBoost)")
      ->capture_default_str()
      ->check(non_negative_integer());
  transfer->add_option("--json", o->json_file, "Write the metrics as JSON to FILE");
  CLI::App* sequences = sub.add_subcommand(
      "sequences", "Per-variable features of every record's strategy in graph order, for the LSTM ranker "
                   "(experiments/autosync_rankers.py): PREFIX.json and PREFIX.f32");
  sequences->add_option("--data", o->data, "Dataset directories")->required();
  sequences->add_option("--out", o->out, "Output prefix: writes PREFIX.json and PREFIX.f32")->required();
  for (CLI::App* c : {train, eval, sequences})
    c->add_option("--pairs", o->pairs, "Only the records of these pairs: model@cluster,... ('*' for any side)");
  for (CLI::App* c : {train, eval, transfer})
    c->add_option("--min-gap", o->min_gap, "Also report accuracy over pairs at least this fraction apart")
        ->capture_default_str()
        ->check(finite_at_least(0));
  return [o, train, eval, transfer, sequences]() -> std::optional<int> {
    if (train->parsed()) return run_train(*o);
    if (sequences->parsed()) return run_sequences(*o);
    if (transfer->parsed()) return run_transfer(*o);
    if (eval->parsed()) return run_eval(*o);
    return std::nullopt;
  };
}

}  // namespace autoddl::cli
