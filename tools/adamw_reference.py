#!/usr/bin/env python3
"""Golden values for lazygrad's optimizers (tests/nn/optim_test.cpp), from PyTorch.

Runs torch.optim.AdamW (foreach=False, the MLPerf settings: betas (0.9, 0.95), eps 1e-5, weight decay
0.1 on the matrix and none on the 1-D parameter), torch.nn.utils.clip_grad_norm_ (max norm 1.0) and
the MLPerf warmup+cosine LR formula on a small deterministic problem, and torch.optim.SGD with
momentum, and writes every step's inputs and results as JSON.

Usage (Debian's python3-torch):  /usr/bin/python3 tools/adamw_reference.py > tests/nn/data/optim_reference.json
"""
import json
import math

import torch

STEPS = 6


def lr_at(s, base=1e-2, end=1e-3, warmup=2, total=STEPS):
    # shared/spec/MLPERF_LLAMA31_8B.md
    if s <= warmup:
        return base * (s + 1) / (warmup + 1)
    return end + (base - end) * 0.5 * (1 + math.cos(math.pi * (s - warmup) / (total - warmup)))


def grads_at(step):
    # Deterministic float32 gradients; steps 1 and 4 are large so clipping engages.
    scale = 3.0 if step in (1, 4) else 0.2
    g0 = torch.tensor([[math.sin(1.3 * step + 0.7 * i + 0.1 * j) * scale for j in range(3)] for i in range(2)],
                      dtype=torch.float32)
    g1 = torch.tensor([math.cos(0.9 * step + 0.4 * j) * scale for j in range(3)], dtype=torch.float32)
    return g0, g1


def floats(t):
    return [float(x) for x in t.detach().reshape(-1).tolist()]


def initial():
    p0 = torch.tensor([[0.5, -1.0, 2.0], [0.1, 0.3, -0.2]], dtype=torch.float32, requires_grad=True)
    p1 = torch.tensor([1.0, 0.5, -0.5], dtype=torch.float32, requires_grad=True)
    return p0, p1


def run(make_opt, clip):
    p0, p1 = initial()
    opt = make_opt(p0, p1)
    out = {"p0": floats(p0), "p1": floats(p1), "steps": []}
    for s in range(STEPS):
        lr = lr_at(s)
        for group in opt.param_groups:
            group["lr"] = lr
        g0, g1 = grads_at(s)
        p0.grad, p1.grad = g0.clone(), g1.clone()
        norm = float(torch.nn.utils.clip_grad_norm_([p0, p1], 1.0)) if clip else None
        opt.step()
        out["steps"].append({"lr": lr, "g0": floats(g0), "g1": floats(g1), "norm": norm,
                             "p0": floats(p0), "p1": floats(p1)})
    return out


def main():
    torch.set_default_dtype(torch.float32)
    adamw = run(lambda p0, p1: torch.optim.AdamW(
        [{"params": [p0], "weight_decay": 0.1}, {"params": [p1], "weight_decay": 0.0}],
        lr=1e-2, betas=(0.9, 0.95), eps=1e-5, foreach=False), clip=True)
    sgd = run(lambda p0, p1: torch.optim.SGD([p0, p1], lr=1e-2, momentum=0.9, weight_decay=0.01, foreach=False),
              clip=False)
    print(json.dumps({"torch_version": torch.__version__, "adamw": adamw, "sgd": sgd}, indent=1))


if __name__ == "__main__":
    main()
