#!/usr/bin/python3
"""AutoSync's rankers compared on held-out strategies (issue 32 item 4): the linear and XGBoost
rankers of `autoddl sync train` and a recurrent ranker, AutoSync's best (RankRNN,
reference/autosync.md §4c): an LSTM over the model's variables in graph order, in torch.

Every ranker gets the same split and the same metrics. The split is `autoddl sync train`'s own
(a seeded share of each (model, cluster) pair's strategies held out): the linear and XGBoost
runs write their held-out scores (`--scores`), and the LSTM trains on the records those files do
not name and scores the ones they do. Metrics, computed here for all three from the scores, as
sync/src/rank_metrics.cpp does (and checked against autoddl's own numbers for the linear and
XGBoost rankers): pairwise accuracy and Kendall tau over the pairs of each held-out list, the
accuracy over the pairs at least 5% apart, and top-1 regret (the runtime of the strategy scored
first over the list's fastest, minus 1), averaged over lists.

The LSTM (AutoSync's shape, smaller): each variable's row (`autoddl sync sequences`: size,
sparsity, its shards' architecture, server, compressor, algorithm, group and server loads)
through a small MLP, a bidirectional LSTM over the rows in graph order, its final states joined
with an MLP of the record's whole-strategy features (AutoSync's best variant appended its
predefined features the same way), and a linear head: one score. Trained with RankNet's pairwise
logistic loss over the pairs of a minibatch drawn from one list (a list = one pair's strategies,
so every sequence in a batch has the same length), Adam (lr 2e-3, weight decay 3e-4, AutoSync's),
gradient norm clipped at 0.25, a fixed seed and one thread (deterministic on one machine).

  experiments/autosync_rankers.py --data DIR [--generate PAIRS --per-pair N] [--out FILE.json]

With --generate, DIR is written first when it has no records.jsonl (`autoddl sync dataset --out
DIR --pairs PAIRS --per-pair N`). Prints a markdown table; --out writes the numbers as JSON."""
import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MIN_GAP = 0.05  # sync::kDefaultMinGap


# ---------------------------------------------------------------------------------------------
# metrics (as sync/src/rank_metrics.cpp)

def rank_metrics(lists, min_gap=0.0):
    """lists: {pair: [(runtime_s, score), ...]} -> dict of pairwise_accuracy, kendall_tau,
    top1_regret, pairs. A tie in score orders nothing (counted as discordant), as in C++."""
    conc = disc = 0
    regret = 0.0
    for members in lists.values():
        n = len(members)
        for a in range(n):
            ra, sa = members[a]
            for b in range(a + 1, n):
                rb, sb = members[b]
                if ra == rb:
                    continue
                if max(ra, rb) < min(ra, rb) * (1 + min_gap):
                    continue
                agree = sa > sb if ra < rb else sb > sa
                if agree:
                    conc += 1
                else:
                    disc += 1
        top = 0
        for i in range(n):
            if members[i][1] > members[top][1]:
                top = i
        regret += members[top][0] / min(r for r, _ in members) - 1
    pairs = conc + disc
    return {"pairwise_accuracy": conc / pairs if pairs else 0.0,
            "kendall_tau": (conc - disc) / pairs if pairs else 0.0,
            "top1_regret": regret / len(lists) if lists else 0.0, "pairs": pairs}


def metrics_row(lists):
    m = rank_metrics(lists)
    g = rank_metrics(lists, MIN_GAP)
    m["gap_pairwise_accuracy"] = g["pairwise_accuracy"]
    m["gap_pairs"] = g["pairs"]
    return m


# ---------------------------------------------------------------------------------------------
# the LSTM ranker

def load_sequences(prefix):
    """PREFIX.json + PREFIX.f32 of `autoddl sync sequences` -> (meta, rows float32 [N, columns])."""
    with open(prefix + ".json") as fh:
        meta = json.load(fh)
    if meta.get("format") != "autoddl-sync-sequences":
        raise SystemExit(f"{prefix}.json: format: must be \"autoddl-sync-sequences\"")
    cols = len(meta["columns"])
    rows = np.fromfile(os.path.join(os.path.dirname(prefix + ".json"), meta["rows_file"]), dtype="<f4")
    if rows.size % cols:
        raise SystemExit(f"{prefix}.f32: {rows.size} floats is not a multiple of {cols} columns")
    return meta, rows.reshape(-1, cols)


def global_transform(x, eps):
    """[x, log(max(x, 0) + eps)]: the linear ranker's inputs (ratios within a list weigh the same
    for small and large models)."""
    return np.concatenate([x, np.log(np.maximum(x, 0) + eps)], axis=1)


class Standardizer:
    def __init__(self, x):
        self.mean = x.mean(axis=0)
        self.std = x.std(axis=0)
        self.std[~(self.std > 0)] = 1.0

    def __call__(self, x):
        return (x - self.mean) / self.std


class LstmRanker:
    """fit(items) / score(items); an item is (seq [T, C] float32, features [F] float, runtime_s, list id)."""

    def __init__(self, seed=1, epochs=40, hidden=64, batch=32, lr=2e-3, weight_decay=3e-4, clip=0.25):
        self.seed, self.epochs, self.hidden, self.batch = seed, epochs, hidden, batch
        self.lr, self.weight_decay, self.clip = lr, weight_decay, clip

    def _build(self, columns, features):
        import torch
        from torch import nn

        h = self.hidden

        class Net(nn.Module):
            def __init__(self):
                super().__init__()
                self.var_mlp = nn.Sequential(nn.Linear(columns, h), nn.ReLU(), nn.Linear(h, h), nn.ReLU())
                self.lstm = nn.LSTM(h, h, num_layers=1, batch_first=True, bidirectional=True)
                self.glob = nn.Sequential(nn.Linear(features, h), nn.ReLU())
                self.head = nn.Linear(2 * h + h, 1)

            def forward(self, seq, feats):
                _, (hn, _) = self.lstm(self.var_mlp(seq))          # hn: [2, B, h]
                state = torch.cat([hn[0], hn[1]], dim=1)           # both directions' final states
                return self.head(torch.cat([state, self.glob(feats)], dim=1)).squeeze(1)

        return Net()

    def _tensors(self, items):
        import torch
        seq = torch.from_numpy(np.stack([self.seq_std(it[0]) for it in items]).astype(np.float32))
        feats = np.stack([it[1] for it in items])
        feats = torch.from_numpy(self.feat_std(global_transform(feats, self.eps)).astype(np.float32))
        return seq, feats

    def fit(self, items):
        import torch
        torch.manual_seed(self.seed)
        torch.set_num_threads(1)
        rng = np.random.default_rng(self.seed)
        feats = np.stack([it[1] for it in items])
        self.eps = np.abs(feats).max(axis=0) * 1e-6 + 1e-300
        self.feat_std = Standardizer(global_transform(feats, self.eps))
        self.seq_std = Standardizer(np.concatenate([it[0] for it in items]))
        self.net = self._build(items[0][0].shape[1], 2 * feats.shape[1])
        opt = torch.optim.Adam(self.net.parameters(), lr=self.lr, weight_decay=self.weight_decay)
        by_list = {}
        for i, it in enumerate(items):
            by_list.setdefault(it[3], []).append(i)
        self.losses = []
        for epoch in range(self.epochs):
            batches = []
            for members in by_list.values():
                perm = rng.permutation(members)
                batches += [perm[k:k + self.batch] for k in range(0, len(perm), self.batch)]
            rng.shuffle(batches)
            total = 0.0
            for b in batches:
                if len(b) < 2:
                    continue
                seq, f = self._tensors([items[i] for i in b])
                rt = torch.tensor([items[i][2] for i in b], dtype=torch.float64)
                s = self.net(seq, f)
                # RankNet: log(1 + exp(-(s_fast - s_slow))) over the batch's ordered pairs
                faster = (rt[:, None] < rt[None, :]).float()
                diff = s[:, None] - s[None, :]
                n = faster.sum()
                if n == 0:
                    continue
                loss = (torch.nn.functional.softplus(-diff) * faster).sum() / n
                opt.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(self.net.parameters(), self.clip)
                opt.step()
                total += float(loss)
            self.losses.append(total / max(1, len(batches)))
        return self

    def score(self, items):
        import torch
        out = np.zeros(len(items))
        by_len = {}
        for i, it in enumerate(items):
            by_len.setdefault(it[0].shape[0], []).append(i)
        with torch.no_grad():
            for idx in by_len.values():
                for k in range(0, len(idx), 256):
                    part = idx[k:k + 256]
                    seq, f = self._tensors([items[i] for i in part])
                    out[part] = self.net(seq, f).numpy()
        return out


# ---------------------------------------------------------------------------------------------
# the comparison

def autoddl_cmd(autoddl, *args):
    print("$ autoddl " + " ".join(args), file=sys.stderr, flush=True)
    subprocess.run([autoddl, *args], cwd=ROOT, check=True, stdout=subprocess.DEVNULL)


def read_scores(path):
    """`sync train --scores` CSV -> {(pair, index): score}."""
    with open(path) as fh:
        return {(r["pair"], int(r["index"])): float(r["score"]) for r in csv.DictReader(fh)}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", required=True, help="dataset folder (autoddl sync dataset --out DIR)")
    ap.add_argument("--generate", help="pairs to write into --data first when it has no records.jsonl")
    ap.add_argument("--per-pair", type=int, default=60, help="records per pair with --generate")
    ap.add_argument("--pairs", default="", help="only these pairs (model@cluster,...)")
    ap.add_argument("--holdout", type=float, default=0.2)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--epochs", type=int, default=40)
    ap.add_argument("--autoddl", default=os.path.join(ROOT, "build/autoddl"))
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--out", help="write the numbers as JSON to FILE")
    a = ap.parse_args()
    if not os.path.exists(os.path.join(a.data, "records.jsonl")):
        if not a.generate:
            raise SystemExit(f"{a.data}: no records.jsonl (give --generate PAIRS to write one)")
        autoddl_cmd(a.autoddl, "sync", "dataset", "--out", a.data, "--pairs", a.generate, "--per-pair",
                    str(a.per_pair), "--jobs", str(a.jobs))
    pairs_arg = ["--pairs", a.pairs] if a.pairs else []
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        held = None
        for ranker in ("linear", "xgboost"):
            t0 = time.time()
            autoddl_cmd(a.autoddl, "sync", "train", "--data", a.data, "--ranker", ranker, "--holdout", str(a.holdout),
                        "--seed", str(a.seed), "--out", f"{tmp}/{ranker}.model", "--scores", f"{tmp}/{ranker}.csv",
                        "--json", f"{tmp}/{ranker}.json", *pairs_arg)
            scores = read_scores(f"{tmp}/{ranker}.csv")
            if held is None:
                held = set(scores)
            elif held != set(scores):
                raise SystemExit("the linear and XGBoost runs held out different records (same --seed and --holdout?)")
            with open(f"{tmp}/{ranker}.json") as fh:
                own = json.load(fh)["held_out"]["all"]
            results[ranker] = {"scores": scores, "autoddl": own, "fit_s": time.time() - t0}
        autoddl_cmd(a.autoddl, "sync", "sequences", "--data", a.data, "--out", f"{tmp}/seq", *pairs_arg)
        meta, rows = load_sequences(f"{tmp}/seq")
    lists = {p: k for k, p in enumerate(sorted({r["pair"] for r in meta["records"]}))}
    train, test, test_keys, runtime = [], [], [], {}
    for r in meta["records"]:
        off, n = r["rows"]
        item = (rows[off:off + n], np.asarray(r["features"], dtype=np.float64), r["runtime_s"], lists[r["pair"]])
        key = (r["pair"], r["index"])
        runtime[key] = r["runtime_s"]
        if key in held:
            test.append(item)
            test_keys.append(key)
        else:
            train.append(item)
    if not test or not train:
        raise SystemExit("nothing to train on or to test: give more records per pair")
    t0 = time.time()
    lstm = LstmRanker(seed=a.seed, epochs=a.epochs).fit(train)
    results["lstm"] = {"scores": dict(zip(test_keys, lstm.score(test))), "fit_s": time.time() - t0}

    out = {"data": a.data, "pairs": a.pairs, "holdout": a.holdout, "seed": a.seed, "epochs": a.epochs,
           "train_records": len(train), "held_out_records": len(test), "lists": len(lists), "rankers": {}}
    print(f"held out: {len(test)} of {len(train) + len(test)} records ({100 * a.holdout:.0f}% of each of "
          f"{len(lists)} pairs, autoddl sync train's split, seed {a.seed})\n")
    print("| ranker | pairwise accuracy | Kendall tau | top-1 regret | accuracy, pairs >= 5% apart | per pair | fit s |")
    print("|---|---|---|---|---|---|---|")
    for name, res in results.items():
        by_pair = {}
        for key, s in res["scores"].items():
            by_pair.setdefault(key[0], []).append((runtime[key], s))
        m = metrics_row(by_pair)
        per = {p: rank_metrics({p: v})["pairwise_accuracy"] for p, v in sorted(by_pair.items())}
        if "autoddl" in res:  # the same metric code as autoddl's: the numbers must agree
            own = res["autoddl"]
            if abs(own["pairwise_accuracy"] - m["pairwise_accuracy"]) > 1e-6 or own["pairs"] != m["pairs"]:
                raise SystemExit(f"{name}: accuracy here {m['pairwise_accuracy']:.6f} over {m['pairs']} pairs, "
                                 f"autoddl's {own['pairwise_accuracy']:.6f} over {own['pairs']}")
        out["rankers"][name] = {**m, "per_pair": per, "fit_s": res["fit_s"]}
        per_text = ", ".join(f"{p} {v:.3f}" for p, v in per.items())
        print(f"| {name} | {m['pairwise_accuracy']:.3f} | {m['kendall_tau']:.3f} | {100 * m['top1_regret']:.2f}% | "
              f"{m['gap_pairwise_accuracy']:.3f} | {per_text} | {res['fit_s']:.1f} |")
    if a.out:
        with open(a.out, "w") as fh:
            json.dump(out, fh, indent=1)
            fh.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
