#!/usr/bin/env python3
"""Markdown table of `autoddl sync search` reports (scripts/sync_search_table): per model and
cluster, the best found's iteration time, its speedup over the best builder with the same options
(every builder, the fp16-compressed ones included), the same with compression off (the best
uncompressed found vs the best uncompressed builder), and each builder's time as a multiple of the
best found (all means of the same repeated simulator runs). fp16 compression is lossy: a best
found that uses it is marked so. A second folder (the same searches with --sampler-only) adds its
speedup over the best builder."""
import json
import pathlib
import sys

BUILDERS = ["ps", "ps_lb", "partitioned_ps", "uneven_partitioned_ps", "all_reduce", "partitioned_ar",
            "parallax", "horovod", "ddp", "horovod-fp16", "ddp-fp16"]
ORDER = ["vgg16", "resnet50", "resnet101", "densenet121", "inception_v3", "bert", "bert-size-large", "ncf"]


def main(folder, compare=None):
    other = {}
    if compare:
        for path in pathlib.Path(compare).glob("*.json"):
            other[path.stem] = json.loads(path.read_text())["speedup_over_best_builder"]
    rows = []
    for path in sorted(pathlib.Path(folder).glob("*.json")):
        tag, cluster = path.stem.rsplit("@", 1)
        r = json.loads(path.read_text())
        rows.append((cluster, ORDER.index(tag) if tag in ORDER else 99, tag, r))
    rows.sort(key=lambda x: (x[0], x[1]))
    head = ["model", "cluster", "GPUs", "best found", "vs best builder", "best builder",
            "compression off: vs best builder", "best uncompressed builder"]
    head += ["sampler only: vs best builder"] if compare else []
    head += BUILDERS
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for cluster, _, tag, r in rows:
        by = {b["builder"]: b["mean_s"] for b in r["builders"]}
        best = r["best"]["mean_s"]
        lossy = " (fp16, lossy)" if r["best"].get("lossy") else ""
        off = r.get("compression_off")
        cells = [tag.replace("-size-large", " large"), cluster, str(r["gpus"]), f"{best * 1e3:.1f} ms{lossy}",
                 f"**{r['speedup_over_best_builder']:.2f}x**", r["best_builder"]["builder"],
                 f"**{off['speedup_over_best_builder']:.2f}x**" if off else "-",
                 off["best_builder"]["builder"] if off else "-"]
        if compare:
            key = f"{tag}@{cluster}"
            cells.append(f"{other[key]:.2f}x" if key in other else "-")
        cells += [f"{by[b] / best:.2f}x" if b in by else "-" for b in BUILDERS]
        print("| " + " | ".join(cells) + " |")
    print(f"\nBuilder columns: the builder's iteration time / the best found's. {len(rows)} searches, "
          f"{rows[0][3]['trials'] if rows else 0} trials each.")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "build/sync_search", sys.argv[2] if len(sys.argv) > 2 else None)
