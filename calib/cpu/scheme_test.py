#!/usr/bin/env python3
"""One ctest case of the CPU executor (label `exec`): makes a scheme with autoddl (a Megatron
layout lowered by `cost`, or the best scheme `search` finds), writes its graph and plan JSON with
`cost --graph-json --plan-json`, and runs calib/cpu/sbp_step.py on as many processes as the mesh
has devices. With --non-megatron the scheme must be one no Megatron layout expresses (`export
--to megatron-lm` refuses it). Exits 77 (ctest's skip) when no python3 with torch is found.

    scheme_test.py AUTODDL --model gpt --set k=v,... [--cluster C --nodes N] [--mesh 2x2]
                   (--scheme SPEC | --search METHOD)
                   [--non-megatron] [--procs N] [--misprice] [--expect-exit RC] -- [sbp_step.py options]
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))


def torch_python():
    """A python3 that imports torch with gloo: this one, or Debian's (python3-torch)."""
    for exe in [sys.executable, "/usr/bin/python3"]:
        r = subprocess.run([exe, "-c", "import torch.distributed as d; assert d.is_gloo_available()"],
                           capture_output=True)
        if r.returncode == 0:
            return exe
    return None


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode != 0:
        sys.exit(f"scheme_test: {' '.join(cmd)}: exit {r.returncode}\n{r.stdout}{r.stderr}")
    return r


def main():
    argv = sys.argv[1:]
    rest = []
    if "--" in argv:
        rest = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    ap = argparse.ArgumentParser()
    ap.add_argument("autoddl")
    ap.add_argument("--model", required=True)
    ap.add_argument("--set", required=True)
    ap.add_argument("--mesh", help="the SBP mesh, as autoddl's --mesh (Megatron layouts build their own)")
    ap.add_argument("--cluster", default="autosync-b", help="a preset whose GPU count fits the mesh")
    ap.add_argument("--nodes", default="1")
    ap.add_argument("--scheme")
    ap.add_argument("--search")
    ap.add_argument("--non-megatron", action="store_true")
    ap.add_argument("--procs", type=int, help="processes (default: the mesh's device count)")
    ap.add_argument("--misprice", action="store_true",
                    help="test only: double the bytes of the plan's first collective step, as a wrong price would")
    ap.add_argument("--expect-exit", type=int, default=0, help="the executor's expected exit status")
    args = ap.parse_args(argv)
    py = torch_python()
    if py is None:
        print("scheme_test: skipped: no python3 with torch and gloo (apt-get install python3-torch)")
        return 77
    model = ["--model", args.model, "--set", args.set, "--cluster", args.cluster, "--nodes", args.nodes]
    if args.mesh:
        model += ["--mesh", args.mesh]
    with tempfile.TemporaryDirectory(prefix="autoddl-exec.") as tmp:
        scheme = os.path.join(tmp, "scheme.json")
        if args.search:
            r = run([args.autoddl, "search", *model, "--method", args.search, "--seed", "1", "--no-zero",
                     "--out", scheme])
            print(r.stdout.splitlines()[0] if r.stdout else "")
        else:
            run([args.autoddl, "cost", *model, "--scheme", args.scheme, "--out", scheme])
        if args.non_megatron:
            r = subprocess.run([args.autoddl, "export", *model, "--scheme", scheme, "--to", "megatron-lm"],
                               capture_output=True, text=True)
            if r.returncode == 0:
                sys.exit("scheme_test: the searched scheme is a Megatron layout; this case needs one that is not")
            print(f"not a Megatron layout: {(r.stdout + r.stderr).strip().splitlines()[-1]}")
        graph, plan = os.path.join(tmp, "graph.json"), os.path.join(tmp, "plan.json")
        run([args.autoddl, "cost", *model, "--scheme", scheme, "--graph-json", graph, "--plan-json", plan])
        if args.misprice:
            with open(plan) as f:
                p = json.load(f)
            steps = [st for op in p["ops"] for i in op["inputs"] for k in ("fwd", "bwd") if i[k] for st in i[k]["steps"]]
            if not steps:
                sys.exit("scheme_test: --misprice: the plan has no collective step")
            steps[0]["bytes"] *= 2
            with open(plan, "w") as f:
                json.dump(p, f)
        with open(scheme) as f:
            mesh = json.load(f)["mesh"]
        procs = 1
        for m in mesh:
            procs *= m
        procs = args.procs or procs
        r = subprocess.run([py, os.path.join(HERE, "sbp_step.py"), graph, scheme, plan, "--procs", str(procs), *rest],
                           text=True)
        if r.returncode != args.expect_exit:
            print(f"scheme_test: the executor exited {r.returncode}, expected {args.expect_exit}")
            return 1
        return 0


if __name__ == "__main__":
    sys.exit(main())
