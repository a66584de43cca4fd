"""The training step tools/gpu_check.sh times in lazygrad, in PyTorch on a GPU: the llama3.1-8b
shape (dim 4096, 32/8 heads, ffn 14336, vocab 128256) cut to --layers, bf16 autocast over fp32
weights, cross-entropy, backward, clip 1.0, AdamW. The model is tools/llama_reference.py's (the
PyTorch twin). Prints one JSON line: median step seconds, tokens/s and MFU with lazygrad's FLOP
count (LlamaConfig::train_flops_per_token: 6 x matmul parameters + 12 x layers x dim x seq).

    python3 tools/gpu_check_torch_step.py [--layers 2] [--seq 2048] [--batch 1] [--steps 3]
                                           [--warmup 1] [--device cuda] [--peak-tflops 989]
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch  # noqa: E402

from llama_reference import (hf_config, init_params, llama3_scaling, logits_of, loss_of,  # noqa: E402
                             make_adamw, rope_tables)

DIM, HEADS, KV_HEADS, FFN, VOCAB = 4096, 32, 8, 14336, 128256


def train_flops_per_token(layers, seq):
    kv = KV_HEADS * (DIM // HEADS)
    per_layer = DIM * DIM * 2 + DIM * kv * 2 + DIM * FFN * 3
    return 6.0 * (per_layer * layers + VOCAB * DIM) + 12.0 * layers * DIM * seq


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--seq", type=int, default=2048)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--steps", type=int, default=3)
    p.add_argument("--warmup", type=int, default=1)
    p.add_argument("--device", default="cuda")
    p.add_argument("--peak-tflops", type=float, default=989.0)
    a = p.parse_args()
    dev = torch.device(a.device)
    cfg = hf_config(DIM, a.layers, HEADS, KV_HEADS, FFN, VOCAB, max_pos=8192, rope_scaling=llama3_scaling(8192))
    P = {k: v.detach().to(dev).requires_grad_(True) for k, v in init_params(cfg, 0).items()}
    opt = make_adamw(P, 1e-4)
    g = torch.Generator().manual_seed(1)
    stream = torch.randint(0, VOCAB, (a.batch, a.seq + 1), generator=g, dtype=torch.int32).to(dev)
    tokens, labels = stream[:, :-1], stream[:, 1:]
    tables = tuple(t.to(dev) for t in rope_tables(cfg, a.seq))

    def sync():
        if dev.type == "cuda":
            torch.cuda.synchronize()

    def one_step():
        with torch.autocast(dev.type, dtype=torch.bfloat16):
            loss = loss_of(logits_of(cfg, P, tokens, tables), labels)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(list(P.values()), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        return loss

    for _ in range(a.warmup):
        one_step()
    sync()
    times = []
    for _ in range(a.steps):
        t0 = time.perf_counter()
        loss = one_step()
        sync()
        times.append(time.perf_counter() - t0)
    times.sort()
    median = times[len(times) // 2]
    tps = a.batch * a.seq / median
    print(json.dumps({"median_step_s": round(median, 4), "tokens_per_s": round(tps, 1),
                      "mfu": round(train_flops_per_token(a.layers, a.seq) * tps / (a.peak_tflops * 1e12), 4),
                      "loss": round(float(loss), 4), "torch": torch.__version__}))


if __name__ == "__main__":
    main()
