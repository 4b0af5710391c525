#!/usr/bin/env python3
"""Writes the recorded outputs that tests/calib/replay/srun replays for `autoddl calibrate
--launcher` on a 4 x 8 H100 cluster (README.md in this folder says which numbers are real).

Run from this folder: python3 make_multinode.py  (deterministic; rewrites *.json, *.txt and the
NCCL programs' *.nccl.log except a3mega_2x8_all_reduce_perf.txt, the public log the whole-node
shapes come from)."""
import hashlib
import json
import re

DEVICE = "NVIDIA H100 80GB HBM3"
NODES, GPUS = 4, 8
PUBLIC = "a3mega_2x8_all_reduce_perf.txt"
PUBLIC_URL = ("https://github.com/lessizzmore/create-a3mega-ztan-fork/blob/"
              "02dd8f455c43ced1cf442ef29334bda97149264b/ztan-NCCL-test-result")

# nccl-tests busbw factors (doc/PERFORMANCE.md)
FACTOR = {"all_reduce": lambda p: 2 * (p - 1) / p,
          "all_gather": lambda p: (p - 1) / p,
          "reduce_scatter": lambda p: (p - 1) / p}

# Synthetic α (us) and bus bandwidth (GB/s) per group shape (ranks, per node, groups per node):
# plausible for H100 SXM with NVSwitch inside a node and one 200 Gb/s NIC per GPU (A3 Mega).
SYNTHETIC = {
    (2, 2, 1): (8.0, 250.0), (4, 4, 1): (10.0, 330.0), (8, 8, 1): (13.0, 370.0),
    (2, 1, 1): (25.0, 45.0), (4, 1, 1): (32.0, 44.0),   # one group alone: PXN spreads it over NICs
    (2, 1, 8): (30.0, 21.0), (4, 1, 8): (38.0, 20.0),   # 8 groups at once: one NIC each
}
WHOLE_4x8_SCALE = 1.15  # no public 4-node log was found: the 2-node log's times x 1.15


def noise(key):
    """±2%, deterministic."""
    h = int(hashlib.sha256(key.encode()).hexdigest()[:8], 16)
    return 1 + 0.04 * (h / 0xFFFFFFFF - 0.5)


def public_rows():
    rows = []
    for line in open(PUBLIC):
        f = line.split()
        if line.startswith("#") or len(f) < 13:
            continue
        rows.append((int(f[0]), float(f[5])))  # size, out-of-place time (us)
    return rows


def coll_row(name, size, time_us, ranks, per_node, groups):
    p = ranks
    algbw = size / (time_us * 1e-6) / 1e9
    row = {"name": name, "size_bytes": size, "count": size // 4 if name == "all_reduce" else size // 4 // p,
           "dtype": "fp32", "ranks": ranks, "ranks_per_node": per_node, "time_us": round(time_us, 2),
           "kernel_us": None, "algbw_GBps": round(algbw, 3), "busbw_GBps": round(algbw * FACTOR[name](p), 3),
           "flops": 0, "tflops": 0, "wrong": 0,
           "shape": {"placement": "out-of-place", "redop": "sum" if name != "all_gather" else "none"},
           "skipped": None}
    if groups > 1:
        row["groups_per_node"] = groups
    return row


def doc(benchmark, rows, command):
    return {"format": "autoddl-measurements/1", "benchmark": benchmark,
            "provenance": {"device": DEVICE, "date": "2025-01-01T00:00:00Z", "command": command,
                           "host": "replay", "versions": {}},
            "rows": rows}


def write(stem, d, text):
    with open(stem + ".json", "w") as f:
        json.dump(d, f, indent=1)
        f.write("\n")
    with open(stem + ".txt", "w") as f:
        f.write(text)


def table(d):
    lines = ["# %s (replayed by tests/calib/replay/srun): %s" % (d["benchmark"], d["provenance"]["command"]),
             "#%12s %8s %6s %6s %10s %9s" % ("size", "ranks", "pn", "groups", "time(us)", "busbw")]
    for r in d["rows"]:
        lines.append(" %12d %8d %6d %6d %10.2f %9.2f" % (r["size_bytes"], r["ranks"], r["ranks_per_node"],
                                                         r.get("groups_per_node", 1), r["time_us"], r["busbw_GBps"]))
    return "\n".join(lines) + "\n"


# NCCL's debug log of one run, as rank 0 writes it with NCCL_DEBUG=INFO,
# NCCL_DEBUG_SUBSYS=INIT,ENV,TUNING (formats of NCCL 2.30.7, github.com/NVIDIA/nccl commit 5067397:
# prefix src/debug.cc lines 330 and 354, version src/init.cc line 702, communicator line 1422,
# channels line 1646, tuning src/enqueue.cc line 822). The choices are SYNTHETIC, by the rule in
# nccl_choice() below, not NCCL's: only the format is NCCL's.
NCCL_FUNC = {"all_reduce": "AllReduce", "all_gather": "AllGather", "reduce_scatter": "ReduceScatter"}


def nccl_choice(name, size, ranks, pn):
    if ranks == pn:  # inside one node (NVLink + NVLink SHARP)
        if size < 64 << 10:
            return "RING", "LL"
        if name == "all_reduce" and size >= 4 << 20:
            return "NVLS", "SIMPLE"
        return "RING", "LL128" if size < 16 << 20 else "SIMPLE"
    if name == "all_reduce" and pn > 1:
        if size < 256 << 10:
            return "TREE", "LL"
        return ("TREE", "LL128") if size < 32 << 20 else ("RING", "SIMPLE")
    if name != "all_reduce" and pn == 1 and size >= 1 << 20:
        return "PAT", "SIMPLE"
    return "RING", "LL" if size < 128 << 10 else "SIMPLE"


def nccl_log(name, sizes, ranks, pn):
    prefix = "replay-node001:4242:4242 [0] NCCL INFO "
    lines = [prefix + "NCCL version 2.30.7+cuda13.0",
             prefix + "NCCL_SOCKET_IFNAME set by environment to ^lo,docker",
             prefix + "NCCL_IB_HCA set by environment to mlx5",
             prefix + "comm 0x55d0c0a3e2b0 rank 0 nRanks %d nNodes %d localRanks %d localRank 0 MNNVL 0"
             % (ranks, ranks // pn, pn),
             prefix + "32 coll channels, 32 collnet channels, %d nvls channels, 32 p2p channels, 32 p2p channels "
             "per peer" % (16 if pn > 1 else 0)]
    for size in sizes:
        per_rank = size if name == "all_reduce" else size // ranks
        if per_rank * (1 if name == "all_reduce" else ranks) != size or per_rank % 4:
            continue  # nccl-tests rounds such sizes: no call of exactly this size
        algo, proto = nccl_choice(name, size, ranks, pn)
        channels = 16 if algo == "NVLS" else min(32, max(1, size // (64 << 10)))
        for _ in ("out-of-place", "in-place"):
            lines.append(prefix + "%s: %d Bytes -> Algo %s proto %s channel{Lo..Hi}={0..%d}"
                         % (NCCL_FUNC[name], per_rank, algo, proto, channels - 1))
    return "\n".join(lines) + "\n"


def shapes():
    out = [(g, g, 1) for g in (2, 4, 8)]
    for n in (2, 4):
        out += [(n, 1, 1), (n, 1, GPUS)]
    out += [(2 * GPUS, GPUS, 1), (4 * GPUS, GPUS, 1)]
    return out


def main():
    sizes = [8 << i for i in range(28)]  # 8 B .. 1 GiB
    public = public_rows()
    alpha_public = min(t for _, t in public)
    for name in ("all_reduce", "all_gather", "reduce_scatter"):
        for ranks, pn, groups in shapes():
            stem = "nccl_%s_g%d_pn%d_c%d" % (name, ranks, pn, groups)
            rows = []
            if (ranks, pn, groups) in SYNTHETIC:
                a, bw = SYNTHETIC[(ranks, pn, groups)]
                for s in sizes:
                    t = (a + FACTOR[name](ranks) * s / (bw * 1e9) * 1e6) * noise(stem + str(s))
                    rows.append(coll_row(name, s, t, ranks, pn, groups))
                command = "synthetic: alpha %.0f us, busbw %.0f GB/s, +-2%% noise (make_multinode.py)" % (a, bw)
            else:
                scale = 1.0 if ranks == 2 * GPUS else WHOLE_4x8_SCALE
                for s, t in public:
                    if name != "all_reduce":  # the all-reduce's bandwidth part times the busbw factor ratio
                        t = 0.6 * alpha_public + (t - alpha_public) * FACTOR[name](ranks) / FACTOR["all_reduce"](ranks)
                        t = max(t, 0.6 * alpha_public) * noise(stem + str(s))
                    rows.append(coll_row(name, s, t * scale, ranks, pn, groups))
                how = "as published" if ranks == 2 * GPUS and name == "all_reduce" else "derived (README.md)"
                command = "nccl-tests all_reduce_perf, 2 x 8 H100, out-of-place, %s: %s" % (how, PUBLIC_URL)
            d = doc("nccl_" + name, rows, command)
            write(stem, d, table(d))
            with open(stem + ".nccl.log", "w") as f:
                f.write(nccl_log(name, sizes, ranks, pn))

    gemm = []
    dims = (256, 1024, 4096, 8192)
    for m in dims:
        for n in dims:
            for k in dims:
                flops = 2.0 * m * n * k
                eff = 0.78 * flops / (flops + 4e9)
                t = (flops / (989e12 * eff) + 4e-6) * noise("gemm%d,%d,%d" % (m, n, k))
                size = 2 * (m * k + k * n + m * n)
                gemm.append({"name": "gemm", "size_bytes": size, "count": m * n, "dtype": "bf16", "ranks": 1,
                             "ranks_per_node": 1, "time_us": round(t * 1e6, 3), "kernel_us": None,
                             "algbw_GBps": round(size / t / 1e9, 3), "busbw_GBps": 0, "flops": flops,
                             "tflops": round(flops / t / 1e12, 3), "wrong": None,
                             "shape": {"m": m, "n": n, "k": k}, "skipped": None})
    d = doc("gemm_cublaslt", gemm, "synthetic: efficiency 0.78 F / (F + 4e9) of 989 TFLOP/s + 4 us (make_multinode.py)")
    write("gemm_cublaslt", d, "# gemm_cublaslt (replayed): %s, %d shapes\n" % (d["provenance"]["command"], len(gemm)))

    hbm = []
    moved = 1 << 20
    while moved <= 4 << 30:
        t = (moved / 3.0e12 + 4e-6) * noise("copy%d" % moved)
        hbm.append({"name": "copy", "size_bytes": moved, "count": moved // 8, "dtype": "fp32", "ranks": 1,
                    "ranks_per_node": 1, "time_us": round(t * 1e6, 3), "kernel_us": None,
                    "algbw_GBps": round(moved / t / 1e9, 3), "busbw_GBps": 0, "flops": 0, "tflops": 0,
                    "wrong": None, "shape": {}, "skipped": None})
        moved *= 2
    for i in range(5):
        hbm.append({"name": "launch", "size_bytes": 0, "count": 0, "dtype": "fp32", "ranks": 1, "ranks_per_node": 1,
                    "time_us": round(2.4 * noise("launch%d" % i), 3), "kernel_us": None, "algbw_GBps": 0,
                    "busbw_GBps": 0, "flops": 0, "tflops": 0, "wrong": None, "shape": {}, "skipped": None})
    d = doc("hbm_copy", hbm, "synthetic: 3.0 TB/s + 4 us per copy, 2.4 us launches (make_multinode.py)")
    write("hbm_copy", d, "# hbm_copy (replayed): %s\n" % d["provenance"]["command"])

    info = {"cuda_runtime": "replay", "cuda_driver": "replay",
            "devices": [{"index": i, "name": DEVICE} for i in range(GPUS)]}
    with open("gpu_info.json", "w") as f:
        json.dump(info, f, indent=1)
        f.write("\n")
    with open("gpu_info.txt", "w") as f:
        f.write("replayed: %d nodes x %d %s (tests/calib/replay/srun)\n" % (NODES, GPUS, DEVICE))


if __name__ == "__main__":
    main()
