#!/usr/bin/env python3
"""Writes the SYNTHETIC nccl-tests logs in this folder (see README.md): stdout in the layout of
NVIDIA nccl-tests' src/util.cu (column widths, getFloatStr number formatting, header, units row,
footer), with times from the fastest of a few alpha-beta lines (as NCCL picks its fastest protocol) plus
deterministic +-2% noise. They are
not measurements of any machine. Run from this folder: python3 make_samples.py
"""
import random

MODEL_NOTE = "synthetic"


def float_str(value, width):
    """nccl-tests' getFloatStr: fixed width, fewer decimals as the value grows."""
    power, val = 0, 1
    while value >= val:
        power += 1
        val *= 10
    if power < width - 2:
        return "%*.2f" % (width, value)
    if power < width - 1:
        return "%*.1f" % (width, value)
    if power < width + 1:
        return "%*.0f" % (width, value)
    return "%*.1e" % (width, value)


def bw_factor(coll, n):
    if coll == "all_reduce":
        return 2.0 * (n - 1) / n
    if coll == "sendrecv":
        return 1.0
    return (n - 1.0) / n


def model_time_us(protocols, size, rng):
    """protocols: [(alpha_us, algbw_GBps)]; like NCCL's tuner, the fastest one runs."""
    t = min(alpha + size / (bw * 1e3) for alpha, bw in protocols)  # GB/s = 1e3 bytes/us
    return t * (1 + rng.uniform(-0.02, 0.02))


def body(time_us, size, factor, wrong):
    algbw = size / 1e3 / time_us  # bytes/us / 1e3 = GB/s
    busbw = algbw * factor
    s = "  %7s  %6s  %6s" % (float_str(time_us, 7), float_str(algbw, 6), float_str(busbw, 6))
    s += "    N/A" if wrong is None else "  %6g" % wrong
    return s, busbw


def write_log(path, *, coll, program, ranks, hosts, gpus_per_proc, sizes, protocols, seed,
              new_format=True, check=True, wrong_at=None, nccl_debug=False, dtype="float"):
    rng = random.Random(seed)
    n = ranks
    factor = bw_factor(coll, n)
    out = []
    if nccl_debug:
        out.append("%s:20417:20417 [0] NCCL INFO Bootstrap : Using eth0:10.1.0.11<0>" % hosts[0])
        out.append("%s:20417:20417 [0] NCCL INFO NET/Plugin: No plugin found (libnccl-net.so)" % hosts[0])
    if new_format:
        out.append("# nccl-tests version 2.14.1 nccl-headers=22609 nccl-library=22609")
        out.append("# Collective test starting: %s" % program)
        out.append("# nThread 1 nGpus %d minBytes %d maxBytes %d step: 2(factor) warmup iters: 5 "
                   "iters: 20 agg iters: 1 validation: %d graph: 0 unalign: 0"
                   % (gpus_per_proc, sizes[0], sizes[-1], 1 if check else 0))
    else:
        out.append("# nThread 1 nGpus %d minBytes %d maxBytes %d step: 2(factor) warmup iters: 5 "
                   "iters: 20 agg iters: 1 validation: %d graph: 0"
                   % (gpus_per_proc, sizes[0], sizes[-1], 1 if check else 0))
    out.append("#")
    out.append("# Using devices")
    per_host = n // len(hosts)
    for r in range(n):
        host = hosts[r // per_host]
        dev = r % per_host
        bus = [0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb][dev % 8]
        pid = 20417 + (r // gpus_per_proc)
        if new_format:
            out.append("#  Rank %2d Group %2d Pid %6d on %10s device %2d [%04x:%02x:%02x] %s"
                       % (r, 0, pid, host, dev, 0, bus, 0, "NVIDIA H100 80GB HBM3"))
        else:
            out.append("#  Rank %2d Group %2d Pid %6d on %10s device %2d [0x%02x] %s"
                       % (r, 0, pid, host, dev, bus, "NVIDIA H100 80GB HBM3"))
    out.append("#")
    out.append("# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          "
               % ("", "", "", "", ""))
    out.append("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s"
               % ("size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong",
                  "time", "algbw", "busbw", "#wrong", 0, ""))
    out.append("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s %*s"
               % ("(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)",
                  "(GB/s)", "(GB/s)", "", 0, ""))
    elem = 2 if dtype in ("half", "bfloat16") else 4
    redop = "sum" if coll in ("all_reduce", "reduce_scatter") else "none"
    busbws = []
    for size in sizes:
        count = size // elem if coll in ("all_reduce", "sendrecv") else size // (elem * n)
        oop_wrong = ip_wrong = (0 if check else None)
        if wrong_at == size:
            oop_wrong = 3
        t_oop = model_time_us(protocols, size, rng)
        t_ip = model_time_us(protocols, size, rng)
        b1, bus1 = body(t_oop, size, factor, oop_wrong)
        b2, bus2 = body(t_ip, size, factor, ip_wrong)
        out.append("%12li  %12li  %8s  %6s  %6s" % (size, count, dtype, redop, "%6i" % -1) + b1 + b2)
        busbws.append((bus1 + bus2) / 2)
    errors = 3 if wrong_at is not None else 0
    out.append("# %-20s : %d %s" % ("Out of bounds values", errors, "FAILED" if errors else "OK"))
    out.append("# %-20s : %g %s" % ("Avg bus bandwidth", sum(busbws) / len(busbws), ""))
    out.append("#")
    if new_format:
        out.append("# Collective test concluded: %s" % program)
    out.append("")
    with open(path, "w") as f:
        f.write("\n".join(out))


def pow2(lo, hi):
    s, v = [], lo
    while v <= hi:
        s.append(v)
        v *= 2
    return s


if __name__ == "__main__":
    one_node = ["dgx-h100-a"]
    # all_reduce, 8 GPUs on one NVSwitch node: three protocol-like (alpha, algbw) lines.
    write_log("all_reduce_perf_8xH100.txt", coll="all_reduce", program="all_reduce_perf",
              ranks=8, hosts=one_node, gpus_per_proc=8, sizes=pow2(8, 8 << 30), seed=1,
              protocols=[(14.0, 3.0), (22.0, 40.0), (45.0, 185.0)], nccl_debug=True)
    # all_gather, 16 ranks on two nodes (MPI, one GPU per process), pre-2.14 header (no program
    # line: the collective comes from the file name).
    write_log("all_gather_perf_2x8_mpi.txt", coll="all_gather", program="all_gather_perf",
              ranks=16, hosts=["node01", "node02"], gpus_per_proc=1, sizes=pow2(1024, 1 << 30),
              seed=2, new_format=False, protocols=[(30.0, 4.0), (60.0, 42.0)])
    # reduce_scatter, 4 GPUs; one out-of-place row failed its data check.
    write_log("reduce_scatter_perf_4gpu.txt", coll="reduce_scatter", program="./build/reduce_scatter_perf",
              ranks=4, hosts=["pcie-box"], gpus_per_proc=4, sizes=pow2(1024, 256 << 20), seed=3,
              protocols=[(11.0, 2.5), (25.0, 19.0)], wrong_at=1 << 20)
    # alltoall, 8 GPUs, run with -c 0: #wrong is N/A.
    write_log("alltoall_perf_8gpu_nocheck.txt", coll="alltoall", program="alltoall_perf",
              ranks=8, hosts=one_node, gpus_per_proc=8, sizes=pow2(1024, 1 << 30), seed=4,
              check=False, protocols=[(18.0, 4.0), (30.0, 150.0)])
    # sendrecv, 2 GPUs, bf16.
    write_log("sendrecv_perf_2gpu.txt", coll="sendrecv", program="sendrecv_perf_mpi",
              ranks=2, hosts=one_node, gpus_per_proc=2, sizes=pow2(8, 1 << 30), seed=5,
              dtype="bfloat16", protocols=[(6.0, 12.0), (9.0, 300.0)])
