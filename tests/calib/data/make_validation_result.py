#!/usr/bin/env python3
"""Writes a SYNTHETIC validate_runner result for a validation plan, for tests and goldens.

Every step "takes" its predicted seconds times a fixed factor per step kind (GEMMs 8% slower,
memory-bound kernels 15% faster, communication 30% slower), CUPTI kernel time is 95% of that,
and each iteration is the sum of its steps plus 1%, with the first iteration 40% slower (a
warm-up straggler that the median must ignore). No GPU produced these numbers.

    build/autoddl validate ... --plan-out plan.json
    python3 tests/calib/data/make_validation_result.py plan.json out.json

The fingerprint is calib's plan_fingerprint (calib/src/validation_format.cpp): FNV-1a 64 over
the plan's structure, numbers printed with %.6g, each item followed by '|'.
"""
import json
import sys

FACTORS = {"gemm": 1.08, "memory": 0.85, "collective": 1.30, "send": 1.30, "recv": 1.30}
ITERS = 5


def fingerprint(plan):
    h = 1469598103934665603

    def add(s):
        nonlocal h
        for c in (s + "|").encode():
            h ^= c
            h = (h * 1099511628211) % (1 << 64)

    def num(v):
        add("%.6g" % v)

    for d in plan["mesh"]:
        num(d)
    num(plan["pipeline_dim"])
    for g in plan["groups"]:
        num(g["mesh_dim"])
        for r in g["ranks"]:
            num(r)
    for o in plan["ops"]:
        add(o["name"])
    for r in plan["ranks"]:
        add("rank")
        for s in r["steps"]:
            add(s["kind"])
            add(s["phase"])
            num(s.get("op", -1)), num(s["mb"]), num(1 if s.get("stream") == "comm" else 0)
            add(s["dtype"])
            for k in ("m", "n", "k"):
                num(s.get(k, 0))
            num(s.get("batch", 1))
            num(s["bytes"]), num(s.get("kernels", 1)), num(s.get("group", -1)), num(s.get("peer", -1))
            add(s.get("collective", ""))
    return "%016x" % h


def main():
    plan = json.load(open(sys.argv[1]))
    ranks = []
    for r in plan["ranks"]:
        step_s = [s["predicted_s"] * FACTORS[s["kind"]] for s in r["steps"]]
        total = sum(step_s) * 1.01
        ranks.append({
            "rank": r["rank"],
            "device": r["rank"],
            "step_s": step_s,
            "step_kernel_s": [t * 0.95 for t in step_s],
            "iteration_s": [total * (1.4 if i == 0 else 1.0) for i in range(ITERS)],
        })
    result = {
        "format": "autoddl-validation-result/1",
        "plan": {"model": plan["model"], "cluster": plan["cluster"], "scheme": plan["scheme"],
                 "fingerprint": fingerprint(plan)},
        "skipped": None,
        "provenance": {"device": "synthetic (make_validation_result.py)", "date": "2025-01-01T00:00:00Z",
                       "command": "tests/calib/data/make_validation_result.py", "host": "none",
                       "versions": {}},
        "timing": {"warmup": 1, "iters": ITERS, "cupti_iters": 1, "overlap_grad_sync": True},
        "ranks": ranks,
    }
    with open(sys.argv[2], "w") as f:
        json.dump(result, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
