#!/usr/bin/env python3
"""Run one training step of a model under a scheme's per-op nd-SBP signatures on N CPU
processes (torch.distributed, gloo) and check it against the single-process step.

    sbp_step.py GRAPH.json SCHEME.json PLAN.json --procs N [--seed S] [--dtype float32|float64]
                [--tolerance T] [--break-boxing partial|order]

GRAPH is `autoddl cost --graph-json`, SCHEME `cost --out` or `search --out`, PLAN
`cost --scheme SCHEME --plan-json` (docs/executor.md). Every rank holds each tensor as the local
piece its nd-SBP gives it on the mesh (rank -> mesh coordinates row-major; a mesh dim splitting
an axis cuts it into equal blocks, several dims splitting one axis nest with the lower mesh dim
outermost, as OneFlow's nd-SBP does). Each op runs on local pieces; between a producer's output
SBP and a consumer's input SBP the executor walks the plan's boxing route one mesh dim at a time
with real collectives over that dim's process group. Backward is explicit, as the cost model
prices it: each op's local backward (torch autograd on the local pieces) yields its input
gradients in the signature's backward SBPs, gradients of one tensor that share an SBP are summed
locally and boxed once into the SBP the producer's backward needs, and parameter gradients are
synced into their storage SBP by the plan's buckets. The checks: the loss and every parameter
gradient, assembled from the pieces, equal the single-process step within the tolerance; the
collectives each op input ran (mesh dim, kind, nccl-tests size S) equal the plan's steps, and so
do each gradient bucket's. gloo on CPU has no reduce_scatter or all_to_all: they are built from
all_reduce / all_gather here but counted as the collective they stand for.

Exit: 0 all checks pass, 1 a check failed, 2 bad input (one line on stderr).
"""
import argparse
import datetime
import json
import math
import os
import re
import sys
import tempfile
import traceback

PROG = "sbp_step.py"
SUPPORTED = {"matmul", "bias_add", "unary", "binary", "softmax", "layer_norm", "embedding", "reshape",
             "transpose", "concat", "cross_entropy", "attention"}
DTYPE_BYTES = {"fp32": 4, "fp16": 2, "bf16": 2, "fp8": 1, "int32": 4, "int64": 8}


class InputError(Exception):
    pass


# ---------------------------------------------------------------------------------------------
# nd-SBP strings and the boxes (global index ranges) of local pieces

def parse_sbp(text, ndims):
    """'(S(0),B)' or 'S(0)' -> tuple of ('S', axis) / ('B',) / ('P',)."""
    t = text.strip()
    if t.startswith("(") and t.endswith(")"):
        t = t[1:-1]
    parts = re.findall(r"S\(\d+\)|B|P", t)
    if len(parts) != ndims or "".join(parts) != t.replace(",", "").replace(" ", ""):
        raise InputError(f"bad nd-SBP '{text}' for a {ndims}-D mesh")
    out = []
    for p in parts:
        out.append(("S", int(p[2:-1])) if p.startswith("S") else (p,))
    return tuple(out)


def sbp_str(s):
    return "(" + ",".join(f"S({x[1]})" if x[0] == "S" else x[0] for x in s) + ")"


# Which of several mesh dims splitting one axis is outermost (set from --nesting).
NESTING = {"outer_first": True}


def box(sbp, shape, coords, mesh):
    """Global [lo, hi) per axis of the piece at mesh coordinates `coords`."""
    ranges = []
    order = list(range(len(mesh))) if NESTING["outer_first"] else list(reversed(range(len(mesh))))
    for a, n in enumerate(shape):
        idx, cnt = 0, 1
        for d in order:
            m = mesh[d]
            if sbp[d][0] == "S" and sbp[d][1] == a:
                idx, cnt = idx * m + coords[d], cnt * m
        if n % cnt:
            raise InputError(f"{sbp_str(sbp)} does not divide shape {list(shape)}")
        step = n // cnt
        ranges.append((idx * step, (idx + 1) * step))
    return ranges


def box_shape(b):
    return [hi - lo for lo, hi in b]


def intersect(a, b):
    out = []
    for (l1, h1), (l2, h2) in zip(a, b):
        lo, hi = max(l1, l2), min(h1, h2)
        if lo >= hi:
            return None
        out.append((lo, hi))
    return out


def rel_slices(inner, outer):
    return tuple(slice(lo - olo, hi - olo) for (lo, hi), (olo, _) in zip(inner, outer))


def contains(outer, inner):
    return all(ol <= il and ih <= oh for (ol, oh), (il, ih) in zip(outer, inner))


# ---------------------------------------------------------------------------------------------
# The model: graph, scheme, plan

class Model:
    def __init__(self, graph_path, scheme_path, plan_path):
        def load(path, what):
            try:
                with open(path) as f:
                    return json.load(f)
            except (OSError, ValueError) as e:
                raise InputError(f"{path}: cannot read the {what} JSON: {e}")
        self.g = load(graph_path, "graph")
        self.s = load(scheme_path, "scheme")
        self.p = load(plan_path, "plan")
        s, p = self.s, self.p
        if s.get("format") != "autoddl-scheme-1":
            raise InputError(f"{scheme_path}: not an autoddl-scheme-1 scheme JSON")
        if p.get("format") != "autoddl-plan-1":
            raise InputError(f"{plan_path}: not an autoddl-plan-1 plan JSON (autoddl cost --plan-json)")
        if s.get("pipeline_dim", -1) != -1:
            raise InputError(f"{scheme_path}: pipeline schemes (pipeline_dim {s['pipeline_dim']}) are not run: "
                             "this executor has no stages")
        for key in ("shard_optimizer", "regather_in_backward"):
            if s.get(key):
                raise InputError(f"{scheme_path}: {key} is not run by this executor")
        if s.get("micro_batches", 1) != 1:
            raise InputError(f"{scheme_path}: micro_batches {s['micro_batches']}: only 1 is run")
        self.mesh = list(s["mesh"])
        if list(p["sbp_mesh"]) != self.mesh:
            raise InputError(f"{plan_path}: its mesh {p['sbp_mesh']} is not the scheme's {self.mesh}")
        self.nd = len(self.mesh)
        self.devices = math.prod(self.mesh)
        self.tensors = {t["name"]: t for t in self.g["tensors"]}
        self.ops = self.g["ops"]
        self.producer = {}
        for i, op in enumerate(self.ops):
            if op["kind"] not in SUPPORTED:
                raise InputError(f"{graph_path}: op '{op['name']}' is a {op['kind']} op, which this executor "
                                 f"does not run (runs: {', '.join(sorted(SUPPORTED))})")
            for t in op["outputs"]:
                self.producer[t] = (i, op["outputs"].index(t))
        sig = {row["op"]: row for row in s["ops"]}
        self.sig_in, self.sig_out = [], []
        for op in self.ops:
            row = sig.get(op["name"])
            if row is None:
                raise InputError(f"{scheme_path}: no signature for op '{op['name']}' (a scheme of another model?)")
            self.sig_in.append([parse_sbp(x, self.nd) for x in row["in"]])
            self.sig_out.append([parse_sbp(x, self.nd) for x in row["out"]])
        self.storage = {name: parse_sbp(v, self.nd) for name, v in s.get("param_storage", {}).items()}
        for name, t in self.tensors.items():
            if t["role"] == "parameter" and name not in self.storage:
                self.storage[name] = tuple(("B",) for _ in range(self.nd))
        plan_ops = {o["op"]: o for o in p["ops"]}
        self.plan = []
        for op in self.ops:
            if op["name"] not in plan_ops:
                raise InputError(f"{plan_path}: no plan row for op '{op['name']}'")
            self.plan.append(plan_ops[op["name"]])
        self.readers = {}  # tensor -> [(op index, input index)] in forward order
        for i, op in enumerate(self.ops):
            for k, t in enumerate(op["inputs"]):
                self.readers.setdefault(t, []).append((i, k))
        self.derive_backward()

    def has_grad(self, name):
        t = self.tensors[name]
        return t["role"] != "input" and t["dtype"] not in ("int32", "int64")

    def batch_free(self, name):
        """Whether a tensor carries no batch axis (graph-json.md, `batched`)."""
        t = self.tensors[name]
        if t["role"] == "input":
            return t.get("batched", True) is False
        if t["role"] == "parameter":
            return True
        i, _ = self.producer[name]
        return all(self.batch_free(x) for x in self.ops[i]["inputs"] if self.tensors[x]["role"] != "parameter")

    def derive_backward(self):
        """The backward SBPs, as costmodel/graph/src/signature.cpp derive_backward() fixes them."""
        self.sig_in_grad, self.sig_out_grad = [], []
        for i, op in enumerate(self.ops):
            ins, outs = self.sig_in[i], self.sig_out[i]
            free = all(self.batch_free(t) for t in op["outputs"])
            ig = [[None] * self.nd for _ in ins]
            og = [[None] * self.nd for _ in outs]
            for d in range(self.nd):
                dist = any(x[d][0] != "B" for x in ins + outs)
                pass_partial = not dist and free and self.mesh[d] > 1
                for k, x in enumerate(ins):
                    s = x[d]
                    ig[k][d] = s if s[0] == "S" else ("B",) if s[0] == "P" else \
                        (("P",) if dist or pass_partial else ("B",))
                for o, x in enumerate(outs):
                    s = x[d]
                    og[o][d] = s if s[0] == "S" else ("P",) if pass_partial else ("B",)
            self.sig_in_grad.append([tuple(x) for x in ig])
            self.sig_out_grad.append([tuple(x) for x in og])

    def shape(self, name):
        return list(self.tensors[name]["shape"])

    def esize(self, name):
        return DTYPE_BYTES[self.tensors[name]["dtype"]]


# ---------------------------------------------------------------------------------------------
# Deterministic data and the op semantics (shared by the reference and the ranks)

def make_data(model, seed, torch, dtype):
    """Full (global) tensors for every graph input and parameter."""
    gen = torch.Generator().manual_seed(seed)
    data = {}
    # Integer inputs: indices into the table they are looked up in, or class labels.
    bound = {}
    for op in model.ops:
        if op["kind"] == "embedding":
            bound[op["inputs"][1]] = model.shape(op["inputs"][0])[0]
        if op["kind"] == "cross_entropy":
            bound[op["inputs"][1]] = model.shape(op["inputs"][0])[-1]
    for name, t in model.tensors.items():
        if t["role"] == "activation":
            continue
        shape = t["shape"]
        if t["dtype"] in ("int32", "int64"):
            hi = bound.get(name, 2)
            data[name] = torch.randint(0, hi, shape, generator=gen, dtype=torch.int64)
        elif t["role"] == "parameter":
            data[name] = (0.5 * torch.randn(shape, generator=gen, dtype=torch.float64)).to(dtype)
        else:
            data[name] = torch.randn(shape, generator=gen, dtype=torch.float64).to(dtype)
    return data


class OpCtx:
    """What an op needs beyond its local inputs: the global boxes of its pieces and, for a
    class-split cross-entropy, the ranks' all-reduce (None in the single-process reference)."""

    def __init__(self, in_boxes, out_boxes, in_shapes, out_shapes, class_split=None):
        self.in_boxes, self.out_boxes = in_boxes, out_boxes
        self.in_shapes, self.out_shapes = in_shapes, out_shapes
        self.class_split = class_split  # (allreduce(x, op), first_of_class_group) or None
        self.saved = {}


def run_op(torch, op, xs, ctx):
    F = torch.nn.functional
    kind, attrs = op["kind"], op.get("attrs", {})
    if kind == "matmul":
        a, b = xs
        if attrs.get("transpose_b"):
            b = b.transpose(-1, -2)
        return a @ b
    if kind == "bias_add":
        x, b = xs
        ax = attrs.get("axis", -1) % x.dim()
        shape = [1] * x.dim()
        shape[ax] = b.shape[0]
        return x + b.reshape(shape)
    if kind == "unary":
        fn = attrs["fn"]
        if fn == "dropout":  # the identity: a step with dropout is not deterministic
            return xs[0] * 1
        return {"relu": torch.relu, "gelu": F.gelu, "tanh": torch.tanh, "sigmoid": torch.sigmoid,
                "silu": F.silu}[fn](xs[0])
    if kind == "binary":
        return xs[0] + xs[1] if attrs["fn"] == "add" else xs[0] * xs[1]
    if kind == "softmax":
        return torch.softmax(xs[0], dim=attrs.get("axis", -1))
    if kind == "layer_norm":
        x, gamma = xs[0], xs[1]
        ax = attrs.get("axis", -1) % x.dim()
        dims = tuple(range(ax, x.dim()))
        if len(xs) == 3:
            mean = x.mean(dim=dims, keepdim=True)
            var = ((x - mean) ** 2).mean(dim=dims, keepdim=True)
            return (x - mean) / torch.sqrt(var + 1e-5) * gamma + xs[2]
        return x / torch.sqrt((x * x).mean(dim=dims, keepdim=True) + 1e-5) * gamma
    if kind == "embedding":
        table, idx = xs
        lo, hi = ctx.in_boxes[0][0]
        if lo == 0 and hi == ctx.in_shapes[0][0]:
            return table[idx]
        # Rows split (vocab-parallel): rows this piece does not hold give zeros (output P).
        inside = (idx >= lo) & (idx < hi)
        rows = torch.where(inside, idx - lo, torch.zeros_like(idx))
        return table[rows] * inside.unsqueeze(-1).to(table.dtype)
    if kind == "reshape":
        return xs[0].reshape(box_shape(ctx.out_boxes[0]))
    if kind == "transpose":
        return xs[0].permute(*attrs["perm"])
    if kind == "concat":
        return torch.cat(xs, dim=attrs.get("axis", -1))
    if kind == "attention":
        q, k, v = xs
        hq, hk = q.shape[1], k.shape[1]
        if hq != hk:
            k = k.repeat_interleave(hq // hk, dim=1)
            v = v.repeat_interleave(hq // hk, dim=1)
        scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])
        if attrs.get("causal"):
            q0 = ctx.in_boxes[0][2][0]  # the queries' global offset (sequence split)
            k0 = ctx.in_boxes[1][2][0]
            qi = torch.arange(q.shape[2]).unsqueeze(1) + q0
            kj = torch.arange(k.shape[2]).unsqueeze(0) + k0
            scores = scores.masked_fill(kj > qi, float("-inf"))
        return torch.softmax(scores, dim=-1) @ v
    if kind == "cross_entropy":
        return cross_entropy(torch, xs[0], xs[1], ctx)
    raise AssertionError(kind)


def cross_entropy(torch, z, labels, ctx):
    """Sum of per-sample -log softmax over every sample, divided by the global sample count, so
    a batch-split piece's value is its share of the mean (output P)."""
    count = math.prod(ctx.in_shapes[1]) if ctx.in_shapes[1] else 1
    if z.shape[-1] == 1:
        raise InputError("binary (1-class) cross_entropy is not run by this executor")
    lo, hi = ctx.in_boxes[0][-1]
    if lo == 0 and hi == ctx.in_shapes[0][-1]:
        lse = torch.logsumexp(z, dim=-1)
        zt = z.gather(-1, labels.unsqueeze(-1)).squeeze(-1)
        return (lse - zt).sum() / count
    # Classes split (vocab-parallel): the max and sum of exponentials are all-reduced over the
    # dims that split them (internal collectives the cost model neglects; not compared), the
    # log-sum-exp term is kept once per class group, and the softmax gradient flows through a
    # zero-valued term.
    if "lse" not in ctx.saved:
        allreduce, first = ctx.class_split
        with torch.no_grad():
            m = allreduce(z.detach().amax(dim=-1), "max")
            s = allreduce(torch.exp(z.detach() - m.unsqueeze(-1)).sum(dim=-1), "sum")
            ctx.saved["lse"] = (m + torch.log(s), first)
    lse, first = ctx.saved["lse"]
    inside = (labels >= lo) & (labels < hi)
    rows = torch.where(inside, labels - lo, torch.zeros_like(labels))
    zt = z.gather(-1, rows.unsqueeze(-1)).squeeze(-1) * inside.to(z.dtype)
    sm = torch.exp(z.detach() - lse.unsqueeze(-1))
    value = (lse.sum() if first else 0) - zt.sum()
    return (value + (z * sm).sum() - (z.detach() * sm).sum()) / count


def reference_step(model, data, torch):
    """The single-process step: loss and every parameter gradient."""
    vals = {}
    for name, t in data.items():
        vals[name] = t.clone().requires_grad_(model.tensors[name]["role"] == "parameter")
    for op in model.ops:
        xs = [vals[t] for t in op["inputs"]]
        full = [[(0, n) for n in model.shape(t)] for t in op["inputs"]]
        ctx = OpCtx(full, [[(0, n) for n in model.shape(t)] for t in op["outputs"]],
                    [model.shape(t) for t in op["inputs"]], [model.shape(t) for t in op["outputs"]])
        vals[op["outputs"][0]] = run_op(torch, op, xs, ctx)
    loss = vals[model.ops[-1]["outputs"][0]]
    loss.backward()
    grads = {n: vals[n].grad.detach() for n, t in model.tensors.items()
             if t["role"] == "parameter" and vals[n].grad is not None}
    return loss.detach(), grads


# ---------------------------------------------------------------------------------------------
# One rank

class Rank:
    def __init__(self, model, rank, args, torch, dist):
        self.m, self.rank, self.args, self.torch, self.dist = model, rank, args, torch, dist
        mesh = model.mesh
        self.coords, r = [], rank
        for m in reversed(mesh):
            self.coords.append(r % m)
            r //= m
        self.coords.reverse()
        # One process group per line of each mesh dim; every rank creates every group, in order.
        self.groups = [None] * len(mesh)
        self.group_ranks = [None] * len(mesh)
        for d, m in enumerate(mesh):
            if m == 1:
                continue
            others = [range(x) if e != d else [0] for e, x in enumerate(mesh)]
            for fixed in _product(others):
                ranks = []
                for j in range(m):
                    c = list(fixed)
                    c[d] = j
                    ranks.append(_ravel(c, mesh))
                g = dist.new_group(ranks)
                if rank in ranks:
                    self.groups[d], self.group_ranks[d] = g, ranks
        self.internal_bytes = 0
        self.where = ""
        self.bwd_boxed = set()  # (op, input) whose gradient boxing ran

    # -- pieces ----------------------------------------------------------------------------

    def piece_of(self, full, sbp):
        b = box(sbp, list(full.shape), self.coords, self.m.mesh)
        x = full[tuple(slice(lo, hi) for lo, hi in b)].clone()
        for d, s in enumerate(sbp):
            if s[0] == "P" and self.coords[d] != 0:
                x = self.torch.zeros_like(x)
        return x

    def member_coords(self, d, j):
        c = list(self.coords)
        c[d] = j
        return c

    # -- boxing ----------------------------------------------------------------------------

    def step(self, x, src, dst, d, shape, esize, log):
        """Converts piece x from nd-SBP src to dst (they differ on mesh dim d only)."""
        torch, dist, mesh = self.torch, self.dist, self.m.mesh
        a, b = src[d], dst[d]
        if a == b or mesh[d] == 1:
            return x
        p = mesh[d]
        # Nested splits (lower mesh dim outermost): a step on dim d can add or remove a split of
        # axis a by a slice or one collective only when no higher mesh dim splits a too. Checked
        # on every rank alike, before any collective, so all ranks stop at the same step.
        axes = {x[1] for x in (a, b) if x[0] == "S"}
        inner = range(d + 1, len(mesh)) if NESTING["outer_first"] else range(d)
        if any(src[e][0] == "S" and src[e][1] in axes for e in inner if mesh[e] > 1):
            raise NotRealizable(src, dst, d)
        src_box = box(src, shape, self.coords, mesh)
        dst_box = box(dst, shape, self.coords, mesh)
        brk = self.args.break_boxing
        if a[0] == "B" and b[0] == "S":
            if not contains(src_box, dst_box):
                raise NotRealizable(src, dst, d)
            return x[rel_slices(dst_box, src_box)].clone()
        if a[0] == "B" and b[0] == "P":
            return x if self.coords[d] == 0 else torch.zeros_like(x)
        if a[0] == "S" and b[0] == "P":
            if not contains(dst_box, src_box):
                raise NotRealizable(src, dst, d)
            y = torch.zeros(box_shape(dst_box), dtype=x.dtype)
            y[rel_slices(src_box, dst_box)] = x
            return y
        if a[0] == "P":
            # P->B all-reduce; P->S reduce-scatter (all-reduce, then this rank's block).
            log.append((d, "all_reduce" if b[0] == "B" else "reduce_scatter", x.numel() * esize))
            y = x.contiguous().clone()
            if brk != "partial":
                dist.all_reduce(y, group=self.groups[d])
            if b[0] == "B":
                return y
            if not contains(src_box, dst_box):
                raise NotRealizable(src, dst, d)
            return y[rel_slices(dst_box, src_box)].clone()
        # S->B all-gather, S(i)->S(j) all-to-all (an all-gather, each rank keeping its block).
        log.append((d, "all_gather", p * x.numel() * esize) if b[0] == "B" else (d, "all_to_all", x.numel() * esize))
        parts = [torch.empty_like(x) for _ in range(p)]
        dist.all_gather(parts, x.contiguous(), group=self.groups[d])
        if brk == "order":
            parts.reverse()
        y = torch.empty(box_shape(dst_box), dtype=x.dtype)
        covered = 0
        for j, part in enumerate(parts):
            pb = box(src, shape, self.member_coords(d, j), mesh)
            inter = intersect(pb, dst_box)
            if inter is None:
                continue
            y[rel_slices(inter, dst_box)] = part[rel_slices(inter, pb)]
            covered += math.prod(box_shape(inter))
        if covered != y.numel():
            raise NotRealizable(src, dst, d)
        return y

    def walk(self, x, route, shape, esize, log):
        for src, dst in zip(route, route[1:]):
            diff = [d for d in range(self.m.nd) if src[d] != dst[d]]
            if len(diff) != 1:
                raise InputError(f"plan route step {sbp_str(src)} -> {sbp_str(dst)} changes {len(diff)} mesh dims")
            x = self.step(x, src, dst, diff[0], shape, esize, log)
        return x

    def convert(self, x, src, dst, shape, esize, log, route=None):
        """Along the plan's route when it has one, else one mesh dim at a time (dims whose box
        grows first, so that local slices find their block)."""
        if route is None:
            order = sorted(range(self.m.nd), key=lambda d: 0 if dst[d][0] != "S" else 1)
            route, cur = [src], list(src)
            for d in order:
                if cur[d] != dst[d]:
                    cur[d] = dst[d]
                    route.append(tuple(cur))
        elif route[0] != src or route[-1] != dst:
            raise InputError(f"plan route {[sbp_str(r) for r in route]} does not go {sbp_str(src)} -> {sbp_str(dst)}")
        return self.walk(x, route, shape, esize, log)

    def allreduce_dims(self, dims):
        def allreduce(x, how):
            y = x.contiguous().clone()
            for d in dims:
                self.internal_bytes += y.numel() * y.element_size()
                op = self.dist.ReduceOp.MAX if how == "max" else self.dist.ReduceOp.SUM
                self.dist.all_reduce(y, op=op, group=self.groups[d])
            return y
        return allreduce

    # -- the step --------------------------------------------------------------------------

    def run(self, data):
        torch, m = self.torch, self.m
        mesh = m.mesh
        route_of = lambda path: None if path is None else [parse_sbp(x, m.nd) for x in path["route"]]
        steps_of = lambda path: [] if path is None else [(s["dim"], s["kind"], s["bytes"]) for s in path["steps"]]
        logs = []  # (what, planned steps, executed steps)
        val = {}      # tensor -> local piece in its producer's output SBP (activations)
        boxed = {}    # (tensor, nd-SBP) -> boxed piece shared by readers
        saved = []    # per op: (local inputs, ctx)
        for i, op in enumerate(m.ops):
            plan = m.plan[i]
            xs = []
            for k, t in enumerate(op["inputs"]):
                want = m.sig_in[i][k]
                role = m.tensors[t]["role"]
                shape, es = m.shape(t), m.esize(t)
                pin = plan["inputs"][k]
                log = []
                self.where = f"{op['name']} input {k} ({t}) forward"
                if role == "input":
                    x = self.piece_of(data[t], want)
                elif role == "parameter":
                    x = self.convert(self.piece_of(data[t], m.storage[t]), m.storage[t], want, shape, es, log,
                                     route_of(pin.get("fwd")))
                else:
                    j, o = m.producer[t]
                    if (t, want) in boxed:
                        x = boxed[(t, want)]
                    else:
                        x = self.convert(val[t], m.sig_out[j][o], want, shape, es, log, route_of(pin.get("fwd")))
                        boxed[(t, want)] = x
                logs.append((f"{op['name']} input {k} ({t}) forward", steps_of(pin.get("fwd")), log))
                xs.append(x)
            ctx = self.ctx(i, op)
            with torch.no_grad():
                out = run_op(torch, op, xs, ctx)
            val[op["outputs"][0]] = out
            saved.append((xs, ctx))
        loss_name = m.ops[-1]["outputs"][0]
        loss_piece = val[loss_name]

        # Backward: gradient contributions per tensor and SBP, in reverse op order.
        contrib = {}  # tensor -> {nd-SBP: local sum}
        param_grads = {}
        for i in range(len(m.ops) - 1, -1, -1):
            op, plan = m.ops[i], m.plan[i]
            t_out = op["outputs"][0]
            og = m.sig_out_grad[i][0]
            shape_out = m.shape(t_out)
            self.where = f"gradient of {t_out}"
            if t_out == loss_name:
                ones = torch.ones(box_shape(box(tuple(("B",) for _ in mesh), shape_out, self.coords, mesh)),
                                  dtype=loss_piece.dtype)
                dy = self.convert(ones, tuple(("B",) for _ in mesh), og, shape_out, m.esize(t_out), [])
            else:
                dy = self.output_gradient(t_out, og, contrib.get(t_out, {}), logs)
            xs, ctx = saved[i]
            # bwd_regather: the input gathered again for the weight gradient, as the plan charges.
            for k, t in enumerate(op["inputs"]):
                pin = plan["inputs"][k]
                if "bwd_regather" in pin:
                    j, o = m.producer[t]
                    log = []
                    xs[k] = self.convert(val[t], m.sig_out[j][o], m.sig_in[i][k], m.shape(t), m.esize(t), log,
                                         route_of(pin.get("fwd")))
                    logs.append((f"{op['name']} input {k} ({t}) backward re-gather",
                                 [(s["dim"], s["kind"], s["bytes"]) for s in pin["bwd_regather"]], log))
            need = [k for k, t in enumerate(op["inputs"]) if m.has_grad(t)]
            if not need:
                continue
            leaves = [x.detach().requires_grad_(k in need) if x.is_floating_point() else x for k, x in enumerate(xs)]
            with torch.enable_grad():
                out = run_op(torch, op, leaves, ctx)
                gs = torch.autograd.grad(out, [leaves[k] for k in need], dy, allow_unused=True)
            for k, g in zip(need, gs):
                if g is None:
                    g = torch.zeros_like(leaves[k])
                t = op["inputs"][k]
                key = m.sig_in_grad[i][k]
                bucket = contrib.setdefault(t, {})
                # Readers in reverse order: the first reader (forward order) of each SBP ends last.
                bucket[key] = (bucket[key][0] + g, i, k) if key in bucket else (g, i, k)
                if m.tensors[t]["role"] == "parameter":
                    param_grads[t] = contrib[t]

        # Gradient sync into the storage SBP, bucket by bucket as the plan fuses them.
        synced = {}
        for stage in m.p["buckets"]:
            for bi, b in enumerate(stage):
                per_grad = []
                for gr in b["grads"]:
                    t = gr["tensor"]
                    route = [parse_sbp(x, m.nd) for x in gr["route"]]
                    self.where = f"gradient sync of {t}"
                    g = self.sum_into(t, param_grads.get(t, {}), route[0], logs)
                    log = []
                    synced[t] = self.convert(g, route[0], route[-1], m.shape(t), m.esize(t), log, route)
                    per_grad.append(log)
                done = []
                for logx in per_grad:
                    for x, st in enumerate(logx):
                        if x < len(done):
                            if done[x][:2] != st[:2]:
                                done[x] = (-1, "mixed steps in one bucket", 0)
                            else:
                                done[x] = (st[0], st[1], done[x][2] + st[2])
                        else:
                            done.append(st)
                logs.append((f"gradient bucket {bi} ({len(b['grads'])} tensors)",
                             [(s["dim"], s["kind"], s["bytes"]) for s in b["steps"]], done))
        for t, groups in param_grads.items():
            if t in synced:
                continue
            self.where = f"gradient of {t} into its storage SBP"
            first = self.first_reader_sbp(t, groups)
            g = self.sum_into(t, groups, first, logs)
            log = []
            synced[t] = self.convert(g, first, m.storage[t], m.shape(t), m.esize(t), log)
            logs.append((f"gradient of {t} (in no bucket)", [], log))
        # A backward path the plan charges to a reader that did not box its tensor's gradient
        # here (the executor boxes once per SBP, at the first reader) is a mismatch too.
        for i, op in enumerate(m.ops):
            for k, t in enumerate(op["inputs"]):
                path = m.plan[i]["inputs"][k].get("bwd")
                if path is not None and (i, k) not in self.bwd_boxed:
                    logs.append((f"{op['name']} input {k} ({t}) backward", steps_of(path), []))
        return loss_piece, synced, logs

    def first_reader_sbp(self, t, groups):
        # The cost model syncs a parameter's gradient from its first reader's gradient SBP.
        i, k = self.m.readers[t][0]
        return self.m.sig_in_grad[i][k]

    def sum_into(self, t, groups, sbp, logs):
        """A parameter's gradient contributions summed in one SBP (others converted: a
        collective there is one the plan does not have, so the byte check reports it)."""
        total = None
        for key, (g, i, k) in groups.items():
            log = []
            if key != sbp:
                g = self.convert(g, key, sbp, self.m.shape(t), self.m.esize(t), log)
                logs.append((f"{t}: gradient of reader {self.m.ops[i]['name']} into {sbp_str(sbp)}", [], log))
            total = g if total is None else total + g
        if total is None:
            total = self.torch.zeros(box_shape(box(sbp, self.m.shape(t), self.coords, self.m.mesh)))
        return total

    def output_gradient(self, t, og, groups, logs):
        """Sums the readers' gradients of activation t per SBP, boxes each SBP's sum once into
        og (the producer's output-gradient SBP) along the charged reader's plan route."""
        m = self.m
        total = None
        for key, (g, i, k) in groups.items():
            pin = m.plan[i]["inputs"][k]
            path = pin.get("bwd")
            route = None if path is None else [parse_sbp(x, m.nd) for x in path["route"]]
            log = []
            g = self.convert(g, key, og, m.shape(t), m.esize(t), log, route)
            self.bwd_boxed.add((i, k))
            logs.append((f"{m.ops[i]['name']} input {k} ({t}) backward",
                         [] if path is None else [(s["dim"], s["kind"], s["bytes"]) for s in path["steps"]], log))
            total = g if total is None else total + g
        if total is None:
            total = self.torch.zeros(box_shape(box(og, m.shape(t), self.coords, m.mesh)))
        return total

    def ctx(self, i, op):
        m = self.m
        in_boxes = [box(m.sig_in[i][k], m.shape(t), self.coords, m.mesh) for k, t in enumerate(op["inputs"])]
        out_boxes = [box(m.sig_out[i][o], m.shape(t), self.coords, m.mesh) for o, t in enumerate(op["outputs"])]
        class_split = None
        if op["kind"] == "cross_entropy":
            z = m.sig_in[i][0]
            axis = len(m.shape(op["inputs"][0])) - 1
            dims = [d for d in range(m.nd) if z[d] == ("S", axis) and m.mesh[d] > 1]
            if dims:
                class_split = (self.allreduce_dims(dims), all(self.coords[d] == 0 for d in dims))
        return OpCtx(in_boxes, out_boxes, [m.shape(t) for t in op["inputs"]],
                     [m.shape(t) for t in op["outputs"]], class_split)


class NotRealizable(Exception):
    def __init__(self, src, dst, d):
        inner = "higher" if NESTING["outer_first"] else "lower"
        super().__init__(f"{sbp_str(src)} -> {sbp_str(dst)} on mesh dim {d}: a {inner} mesh dim, nested inside it, "
                         "splits the same axis, so the step is no local slice or single collective of dim "
                         f"{d} as the plan prices it (--nesting)")


def _product(ranges):
    out = [[]]
    for r in ranges:
        out = [x + [v] for x in out for v in r]
    return out


def _ravel(c, mesh):
    r = 0
    for x, m in zip(c, mesh):
        r = r * m + x
    return r


# ---------------------------------------------------------------------------------------------
# Processes

def assemble(torch, pieces, sbp, shape, mesh):
    """The global tensor from every rank's piece: split dims placed, partial dims summed,
    broadcast dims taken from coordinate 0 (the others are compared to it separately)."""
    full = torch.zeros(shape, dtype=torch.float64)
    for r, x in enumerate(pieces):
        c = _unravel(r, mesh)
        if any(s[0] == "B" and c[d] != 0 for d, s in enumerate(sbp)):
            continue
        b = box(sbp, shape, c, mesh)
        full[tuple(slice(lo, hi) for lo, hi in b)] += x.to(torch.float64)
    return full


def replica_spread(torch, pieces, sbp, mesh):
    """Largest difference between a piece and its replica at coordinate 0 on every B dim."""
    worst = 0.0
    for r, x in enumerate(pieces):
        c = _unravel(r, mesh)
        c0 = [0 if s[0] == "B" else c[d] for d, s in enumerate(sbp)]
        y = pieces[_ravel(c0, mesh)]
        worst = max(worst, float((x.to(torch.float64) - y.to(torch.float64)).abs().max()) if x.numel() else 0.0)
    return worst


def _unravel(r, mesh):
    c = []
    for m in reversed(mesh):
        c.append(r % m)
        r //= m
    return list(reversed(c))


def worker(rank, args, store_path, out_dir):
    import torch
    import torch.distributed as dist
    torch.set_num_threads(1)
    torch.set_default_dtype(torch.float64 if args.dtype == "float64" else torch.float32)
    model = Model(args.graph, args.scheme, args.plan)
    dtype = torch.float64 if args.dtype == "float64" else torch.float32
    data = make_data(model, args.seed, torch, dtype)
    store = dist.FileStore(store_path, args.procs)
    dist.init_process_group("gloo", store=store, rank=rank, world_size=args.procs,
                            timeout=datetime.timedelta(seconds=args.timeout))
    result = {"rank": rank}
    NESTING["outer_first"] = args.nesting == "lower-outer"
    r = None
    try:
        r = Rank(model, rank, args, torch, dist)
        loss, grads, logs = r.run(data)
        result.update(loss=loss, grads=grads, logs=logs, internal=r.internal_bytes)
    except NotRealizable as e:
        result["error"] = f"{r.where if r else ''}: not realizable: {e}"
    except Exception as e:  # reported by rank 0's parent, with the traceback
        result["error"] = f"{type(e).__name__}: {e}\n{traceback.format_exc()}"
    torch.save(result, os.path.join(out_dir, f"rank{rank}.pt"))
    # Leave together: a rank whose process ends while gloo still talks to it aborts the others
    # ("terminate called without an active exception"). A rank that failed mid-step leaves the
    # others in a collective until the group's timeout.
    try:
        dist.barrier()
        dist.destroy_process_group()
    except RuntimeError:
        pass


def main():
    ap = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0])
    ap.add_argument("graph")
    ap.add_argument("scheme")
    ap.add_argument("plan")
    ap.add_argument("--procs", type=int, required=True, help="processes: must equal the mesh's device count")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dtype", choices=["float32", "float64"], default="float32")
    ap.add_argument("--tolerance", type=float, default=None,
                    help="max |dist - ref| / max |ref| per tensor (default 2e-5 in float32, 1e-10 in float64)")
    ap.add_argument("--break-boxing", choices=["partial", "order"], default=None,
                    help="test only: skip the sum of partial values (partial) or gather pieces in reverse (order)")
    ap.add_argument("--nesting", choices=["lower-outer", "higher-outer"], default="lower-outer",
                    help="which mesh dim is outermost when several split one axis")
    ap.add_argument("--timeout", type=int, default=60, help="seconds a rank waits in a collective")
    ap.add_argument("--verbose", action="store_true", help="print every compared boxing")
    args = ap.parse_args()
    tol = args.tolerance if args.tolerance is not None else (2e-5 if args.dtype == "float32" else 1e-10)
    NESTING["outer_first"] = args.nesting == "lower-outer"  # the ranks set theirs in worker()
    try:
        model = Model(args.graph, args.scheme, args.plan)
        if args.procs != model.devices:
            raise InputError(f"--procs {args.procs} but the scheme's mesh {model.mesh} has {model.devices} devices")
    except InputError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    import torch
    import torch.multiprocessing as mp
    # One thread: the models are tiny, and a forked child must not inherit a busy OpenMP pool.
    torch.set_num_threads(1)
    dtype = torch.float64 if args.dtype == "float64" else torch.float32
    torch.set_default_dtype(dtype)
    data = make_data(model, args.seed, torch, dtype)
    try:
        ref_loss, ref_grads = reference_step(model, data, torch)
    except InputError as e:
        print(f"{PROG}: error: {e}", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="sbp_step.") as tmp:
        # fork: the ranks inherit the imported torch instead of importing it again (seconds each).
        mp.start_processes(worker, args=(args, os.path.join(tmp, "store"), tmp), nprocs=args.procs, join=True,
                           start_method="fork")
        results = [torch.load(os.path.join(tmp, f"rank{r}.pt")) for r in range(args.procs)]
    name = model.s.get("name", os.path.basename(args.scheme))
    errors = [f"rank {r['rank']}: {r['error']}" for r in results if "error" in r]
    if errors:
        print(f"{PROG}: {name}: FAIL\n  " + "\n  ".join(errors))
        return 1
    failures = []
    # Loss.
    loss_sbp = model.sig_out[-1][0]
    loss = assemble(torch, [r["loss"] for r in results], loss_sbp, [], model.mesh)
    loss_err = abs(float(loss) - float(ref_loss)) / max(abs(float(ref_loss)), 1e-30)
    if loss_err > tol:
        failures.append(f"loss {float(loss):.9g} vs single-process {float(ref_loss):.9g} (rel. error {loss_err:.2e})")
    # Gradients.
    worst = (0.0, "")
    # A gradient that is zero in exact arithmetic (a key bias under softmax's shift invariance)
    # is rounding noise in both runs: errors are relative to the tensor's largest value, but
    # never to less than 1e-2 of the largest gradient value of the model.
    floor = 1e-2 * max([float(g.abs().max()) for g in ref_grads.values()] + [1e-30])
    for t, ref in ref_grads.items():
        sbp = model.storage[t]
        pieces = [r["grads"].get(t) for r in results]
        if any(p is None for p in pieces):
            failures.append(f"gradient of {t}: missing on some rank")
            continue
        full = assemble(torch, pieces, sbp, model.shape(t), model.mesh)
        scale = max(float(ref.abs().max()), floor)
        err = float((full - ref.to(torch.float64)).abs().max()) / scale
        spread = replica_spread(torch, pieces, sbp, model.mesh) / scale
        if err > worst[0]:
            worst = (err, t)
        if err > tol or spread > tol:
            failures.append(f"gradient of {t} ({sbp_str(sbp)}): rel. error {err:.2e}, replicas differ by {spread:.2e}")
    # Bytes.
    def same(a, b):
        return len(a) == len(b) and all(x[0] == y[0] and x[1] == y[1] and abs(x[2] - y[2]) <= 1e-9 * max(1.0, x[2])
                                        for x, y in zip(a, b))
    fmt = lambda steps: ", ".join(f"dim {d} {k} {b:.0f} B" for d, k, b in steps) or "nothing"
    checked = moved = 0
    byte_failures = {}  # message -> ranks that report it
    for r in results:
        for what, planned, done in r["logs"]:
            if not same(planned, done):
                byte_failures.setdefault(f"{what}: plan {fmt(planned)}, executed {fmt(done)}", []).append(r["rank"])
            if r["rank"] == 0:
                checked += 1
                moved += sum(b for _, _, b in done)
    for msg, ranks in byte_failures.items():
        who = "every rank" if len(ranks) == args.procs else "rank" + ("s " if len(ranks) > 1 else " ") + \
            ",".join(map(str, ranks))
        failures.append(f"{who}: {msg}")
    n_coll = sum(len(done) for _, _, done in results[0]["logs"])
    print(f"{PROG}: {name} on mesh {model.mesh}, {args.procs} processes, {args.dtype}")
    print(f"  loss {float(loss):.9g}, single-process {float(ref_loss):.9g} (rel. error {loss_err:.1e})")
    print(f"  {len(ref_grads)} parameter gradients, worst rel. error {worst[0]:.1e} ({worst[1]}); tolerance {tol:.0e}")
    print(f"  {checked} boxings and gradient buckets compared with the plan: {n_coll} collectives, "
          f"{moved:.0f} B (nccl-tests sizes) per rank 0; internal all-reduces of vocab-parallel loss "
          f"{results[0]['internal']} B (not priced)")
    if args.verbose:
        for what, planned, done in results[0]["logs"]:
            if planned or done:
                print(f"    {what}: {fmt(done)}")
    if failures:
        print(f"  FAIL: {len(failures)} check(s)")
        for f in failures[:40]:
            print(f"    {f}")
        if len(failures) > 40:
            print(f"    ... {len(failures) - 40} more")
        return 1
    print("  OK: loss, gradients and per-op boxing bytes match")
    return 0


if __name__ == "__main__":
    sys.exit(main())
