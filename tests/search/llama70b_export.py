#!/usr/bin/env python3
"""Issue 34's "done when" on Llama 3 70B over 64 H100 (8 DGX H100), run as written:
`autoddl search --model llama --set size=3-70b --cluster dgx-h100 --nodes 8 --export FORMAT`
prints, per format, the settings of a layout that framework runs whose parallel sizes, batch sizes,
recompute and optimizer flags are those of the search result it names (the best scheme, or the
best result the framework runs when the best is autoddl-only); the report says which frameworks
run the best, the best runnable layout beside it with the gap, the memory margin and the
validation band. `--runnable megatron-lm` keeps only layouts Megatron-LM runs.
Usage: llama70b_export.py AUTODDL"""
import json
import os
import re
import subprocess
import sys
import tempfile

CMD = ["search", "--model", "llama", "--set", "size=3-70b", "--cluster", "dgx-h100", "--nodes", "8"]


def fail(why, text=""):
    sys.exit("FAIL: " + why + ("\n" + text if text else ""))


def spec_of(header):
    """'# megatron:tp=4,pp=4,...: 64 GPUs = ...' -> {'tp': '4', ...}"""
    m = re.match(r"# megatron:([^:]+):", header)
    if not m:
        fail("no megatron spec header", header)
    return dict(kv.split("=") for kv in m.group(1).split(","))


def block(out, fmt):
    """The settings block of one format: from its '<fmt> settings for' line to the next format's line."""
    m = re.search(r"^" + re.escape(fmt) + r" settings for (.*?):\n(.*?)(?=^(?:megatron-lm|megatron-bridge|torchtitan) |\Z)",
                  out, re.M | re.S)
    if not m:
        fail(fmt + ": no settings block", out)
    return m.group(1), m.group(2)


def main():
    autoddl = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        res = subprocess.run([autoddl] + CMD + ["--export", "megatron-lm,megatron-bridge,torchtitan",
                                                "--json", os.path.join(tmp, "s.json")],
                             capture_output=True, text=True)
        if res.returncode != 0:
            fail("search exited %d" % res.returncode, res.stderr)
        out = res.stdout
        j = json.load(open(os.path.join(tmp, "s.json")))
    for line in ("runnable by: ", "memory: peak ", "validation band: H100"):
        if not re.search("^" + re.escape(line), out, re.M):
            fail("no '%s' line" % line, out)
    if not re.search(r"margin -?[0-9.]+ GB", out):
        fail("no memory margin", out)
    best_runs = j["best"]["runnable"]
    if not best_runs and not re.search(r"^best runnable: \S+, .* \([0-9.]+x the best's time\)$", out, re.M):
        fail("an autoddl-only best without the best runnable layout beside it", out)
    for r in j["results"]:
        if r["iteration_s"] is not None and "runnable" not in r:
            fail("a result without its runnable formats", json.dumps(r))

    batch = 8  # the zoo's llama batch
    for fmt in ("megatron-lm", "megatron-bridge", "torchtitan"):
        what, text = block(out, fmt)
        header = next(l for l in text.splitlines() if l.startswith("# megatron:"))
        spec = spec_of(header)
        # The block names the result it exports; that result's note (megatron's grid point) agrees.
        m = re.match(r"the best result it runs, rank (\d+) \((\S+),", what)
        if m:
            r = j["results"][int(m.group(1)) - 1]
            if fmt not in r["runnable"]:
                fail(fmt + ": exported a result it does not run", what)
            note = dict(kv.split("=") for kv in r["note"].split(",") if "=" in kv)
            for k, v in note.items():
                if k in spec and spec[k] != v:
                    fail("%s: %s=%s in the export, %s in the result" % (fmt, k, spec[k], v), header)
        elif fmt not in best_runs:
            fail(fmt + ": exported the best scheme it does not run", what)
        tp, pp, cp = spec["tp"], spec["pp"], spec.get("cp", "1")
        mb = int(spec["mb"])
        dp = int(spec["dp"])
        if fmt == "megatron-lm":
            want = ["--tensor-model-parallel-size %s" % tp, "--pipeline-model-parallel-size %s" % pp,
                    "--micro-batch-size %d" % mb, "--global-batch-size %d" % batch]
            if cp != "1":
                want.append("--context-parallel-size %s" % cp)
            if spec.get("dist_opt") == "1":
                want.append("--use-distributed-optimizer")
            if spec.get("sp") == "1":
                want.append("--sequence-parallel")
            lines = text.splitlines()
            for w in want:
                if w not in lines:
                    fail("megatron-lm: no '%s'" % w, text)
            if spec.get("recompute", "none") == "none" and any(l.startswith("--recompute-granularity") for l in lines):
                fail("megatron-lm: recompute flags for recompute=none", text)
        elif fmt == "megatron-bridge":
            for w in ["cfg.model.tensor_model_parallel_size = %s" % tp,
                      "cfg.model.pipeline_model_parallel_size = %s" % pp,
                      "cfg.train.global_batch_size = %d" % batch, "cfg.train.micro_batch_size = %d" % mb,
                      "cfg.ddp.use_distributed_optimizer = %s" % ("True" if spec.get("dist_opt") == "1" else "False")]:
                if w not in text.splitlines():
                    fail("megatron-bridge: no '%s'" % w, text)
        else:
            for w in ["tensor_parallel_degree = %s" % tp, "pipeline_parallel_degree = %s" % pp,
                      "context_parallel_degree = %s" % cp, "global_batch_size = %d" % batch]:
                if w not in text.splitlines():
                    fail("torchtitan: no '%s'" % w, text)
            if dp * mb * int(pp) < 1:
                fail("torchtitan: sizes", text)

    # --runnable megatron-lm: every result kept is one Megatron-LM runs.
    with tempfile.TemporaryDirectory() as tmp:
        res = subprocess.run([autoddl] + CMD + ["--runnable", "megatron-lm", "--json", os.path.join(tmp, "r.json")],
                             capture_output=True, text=True)
        if res.returncode != 0:
            fail("search --runnable exited %d" % res.returncode, res.stderr)
        kept = json.load(open(os.path.join(tmp, "r.json")))["results"]
    if not kept or any("megatron-lm" not in r.get("runnable", []) for r in kept if r["iteration_s"] is not None):
        fail("--runnable megatron-lm kept a layout Megatron-LM does not run", json.dumps(kept)[:2000])
    print("ok")


main()
