#!/usr/bin/env python3
"""The PyTorch twin of lazygrad's Llama 3.1 (src/llm/llama.cpp): golden values and step timings.

The model is written out in plain PyTorch, op for op as lazygrad builds it: Hugging Face parameter
names and shapes (weights (out, in)); RMSNorm in float32 times the gain; Hugging Face "rotate_half"
rotary layout with the Llama 3.1 frequency scaling (rope_inv_freq), the cos/sin tables computed in
float64 and rounded to float32 as lazygrad does; grouped-query attention (query head h reads kv head
h // (heads/kv_heads)); causal softmax in float32 with scale 1/sqrt(head_dim); SwiGLU
w2(silu(w1 x) * w3 x); final norm; untied head; token-mean cross-entropy in float32.

  golden --out DIR     a micro model (config.json, model.safetensors) and its golden values
                       (golden.safetensors) for tests/llm/llama_golden_test.cpp
  step --config A|B|C --dtype fp32|bf16 [--steps N --warmup W]
                       times one training step (forward + loss + backward + clip + AdamW) of the
                       configurations of shared/bench/BASELINE.md on 2 threads; prints one JSON line
  mini --train PREFIX --eval PREFIX [--minutes 5 --seed S --threads 2 --dtype bf16|fp32 ...]
                       trains the "mini" MLPerf preset (src/llm/mlperf.cpp) with the same recipe on a
                       Megatron .bin/.idx dataset for a training-time budget, evaluating every
                       --eval-every sequences; prints one JSON line per eval (docs/mlperf_target.md)

Run with Debian's python3-torch (1.13): /usr/bin/python3 tools/llama_reference.py golden \\
    --out tests/llm/data/llama_golden
Uses only torch, json, struct, math, argparse, os.
"""
import argparse
import json
import math
import os
import struct
import sys
import time

# Before torch's OpenMP starts: idle OpenMP threads must not spin against OpenBLAS's (BASELINE.md).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import torch  # noqa: E402
import torch.nn.functional as F


# ---------------------------------------------------------------------------------------------------
# Configuration: a Hugging Face LlamaConfig dict, the fields lazygrad's llama_config_to_hf writes.

def hf_config(dim, layers, heads, kv_heads, ffn, vocab, max_pos, rope_theta=500000.0, rope_scaling=None,
              norm_eps=1e-5, init_std=0.02):
    return {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": dim,
            "num_hidden_layers": layers, "num_attention_heads": heads, "num_key_value_heads": kv_heads,
            "intermediate_size": ffn, "vocab_size": vocab, "max_position_embeddings": max_pos,
            "rms_norm_eps": norm_eps, "rope_theta": rope_theta, "initializer_range": init_std,
            "hidden_act": "silu", "attention_bias": False, "mlp_bias": False, "tie_word_embeddings": False,
            "torch_dtype": "float32", "rope_scaling": rope_scaling}


def llama3_scaling(original, factor=8.0, low=1.0, high=4.0):
    return {"rope_type": "llama3", "factor": factor, "low_freq_factor": low, "high_freq_factor": high,
            "original_max_position_embeddings": original}


def head_dim(cfg):
    return cfg["hidden_size"] // cfg["num_attention_heads"]


def rope_branches(cfg):
    """Per frequency, which branch of the Llama 3.1 scaling applies: 'keep', 'smooth' or 'divide'."""
    hd, r = head_dim(cfg), cfg["rope_scaling"]
    low_wavelen = r["original_max_position_embeddings"] / r["low_freq_factor"]
    high_wavelen = r["original_max_position_embeddings"] / r["high_freq_factor"]
    out = []
    for i in range(hd // 2):
        wavelen = 2 * math.pi * cfg["rope_theta"] ** (2 * i / hd)
        out.append("divide" if wavelen > low_wavelen else "smooth" if wavelen >= high_wavelen else "keep")
    return out


def rope_inv_freq(cfg):
    """lazygrad's rope_inv_freq (float64): head_dim/2 frequencies, scaled as Llama 3.1 when enabled."""
    hd, r = head_dim(cfg), cfg.get("rope_scaling")
    freqs = []
    for i in range(hd // 2):
        f = 1.0 / cfg["rope_theta"] ** (2 * i / hd)
        if r is not None:
            orig = r["original_max_position_embeddings"]
            low, high, factor = r["low_freq_factor"], r["high_freq_factor"], r["factor"]
            wavelen = 2 * math.pi / f
            if wavelen > orig / low:
                f /= factor
            elif wavelen >= orig / high:
                s = (orig / wavelen - low) / (high - low)
                f = (1 - s) * f / factor + s * f
        freqs.append(f)
    return freqs


def rope_tables(cfg, seq):
    """cos, sin (seq, head_dim) float32: angle p*inv_freq[i % (hd/2)] in float64, then rounded."""
    inv = torch.tensor(rope_inv_freq(cfg), dtype=torch.float64)
    angles = torch.arange(seq, dtype=torch.float64)[:, None] * torch.cat([inv, inv])[None, :]
    return angles.cos().float(), angles.sin().float()


# ---------------------------------------------------------------------------------------------------
# The model: parameters in a dict keyed by Hugging Face names, forward as plain functions.

def param_shapes(cfg):
    """(name, shape) in lazygrad's Llama::params() order."""
    d, hd = cfg["hidden_size"], head_dim(cfg)
    h, kv, ffn, v = cfg["num_attention_heads"], cfg["num_key_value_heads"], cfg["intermediate_size"], cfg["vocab_size"]
    out = [("model.embed_tokens.weight", (v, d))]
    for i in range(cfg["num_hidden_layers"]):
        p = "model.layers.%d." % i
        out += [(p + "self_attn.q_proj.weight", (h * hd, d)), (p + "self_attn.k_proj.weight", (kv * hd, d)),
                (p + "self_attn.v_proj.weight", (kv * hd, d)), (p + "self_attn.o_proj.weight", (d, h * hd)),
                (p + "mlp.gate_proj.weight", (ffn, d)), (p + "mlp.up_proj.weight", (ffn, d)),
                (p + "mlp.down_proj.weight", (d, ffn)), (p + "input_layernorm.weight", (d,)),
                (p + "post_attention_layernorm.weight", (d,))]
    return out + [("model.norm.weight", (d,)), ("lm_head.weight", (v, d))]


def init_params(cfg, seed, norm_jitter=0.0, wider=None):
    """MLPerf init: normal(0, std), std/sqrt(2*layers) for o_proj and down_proj, norm gains 1 (plus
    normal(0, norm_jitter) when given, so the gains' gradients are not all alike). `wider` maps a
    name part ("q_proj") to a std that replaces the MLPerf one for matching matrices."""
    g = torch.Generator().manual_seed(seed)
    std, layers = cfg["initializer_range"], cfg["num_hidden_layers"]
    params = {}
    for name, shape in param_shapes(cfg):
        if len(shape) == 1:
            t = torch.ones(shape) + norm_jitter * torch.randn(shape, generator=g)
        else:
            s = std / math.sqrt(2 * layers) if ("o_proj" in name or "down_proj" in name) else std
            for part, wide_std in (wider or {}).items():
                if part in name:
                    s = wide_std
            t = torch.randn(shape, generator=g) * s
        params[name] = t.float().requires_grad_(True)
    return params


def rms_norm(x, w, eps):
    # lazygrad nn::RMSNorm: float32 x * rsqrt(mean(x^2) + eps) * w, result in x's dtype.
    xf = x.float()
    y = xf * torch.rsqrt(xf.square().mean(-1, keepdim=True) + eps) * w
    return y.to(x.dtype)


def rotate_half(x):
    half = x.shape[-1] // 2
    return torch.cat([-x[..., half:], x[..., :half]], dim=-1)


def attention(cfg, P, p, x, cos, sin):
    # x (B, S, d) -> (B, S, d)
    B, S, _ = x.shape
    H, KV, hd = cfg["num_attention_heads"], cfg["num_key_value_heads"], head_dim(cfg)
    q = F.linear(x, P[p + "self_attn.q_proj.weight"]).view(B, S, H, hd).transpose(1, 2)   # (B, H, S, hd)
    k = F.linear(x, P[p + "self_attn.k_proj.weight"]).view(B, S, KV, hd).transpose(1, 2)  # (B, KV, S, hd)
    v = F.linear(x, P[p + "self_attn.v_proj.weight"]).view(B, S, KV, hd).transpose(1, 2)
    q = q * cos.to(q.dtype) + rotate_half(q) * sin.to(q.dtype)
    k = k * cos.to(k.dtype) + rotate_half(k) * sin.to(k.dtype)
    # Grouped-query attention: query head h reads kv head h // rep (Hugging Face repeat_kv).
    rep = H // KV
    k = k[:, :, None].expand(B, KV, rep, S, hd).reshape(B, H, S, hd)
    v = v[:, :, None].expand(B, KV, rep, S, hd).reshape(B, H, S, hd)
    scores = torch.matmul(q, k.transpose(-2, -1)).float() * (1.0 / math.sqrt(hd))  # (B, H, S, S)
    future = torch.ones(S, S, dtype=torch.bool, device=x.device).triu(1)
    scores = scores.masked_fill(future, float("-inf"))
    probs = scores.softmax(-1).to(q.dtype)
    out = torch.matmul(probs, v)  # (B, H, S, hd)
    return F.linear(out.transpose(1, 2).reshape(B, S, H * hd), P[p + "self_attn.o_proj.weight"])


def hidden(cfg, P, tokens, tables):
    cos, sin = tables
    eps = cfg["rms_norm_eps"]
    h = F.embedding(tokens.long(), P["model.embed_tokens.weight"])
    for i in range(cfg["num_hidden_layers"]):
        p = "model.layers.%d." % i
        h = h + attention(cfg, P, p, rms_norm(h, P[p + "input_layernorm.weight"], eps), cos, sin)
        x = rms_norm(h, P[p + "post_attention_layernorm.weight"], eps)
        h = h + F.linear(F.silu(F.linear(x, P[p + "mlp.gate_proj.weight"])) * F.linear(x, P[p + "mlp.up_proj.weight"]),
                         P[p + "mlp.down_proj.weight"])
    return rms_norm(h, P["model.norm.weight"], eps)


def logits_of(cfg, P, tokens, tables):
    return F.linear(hidden(cfg, P, tokens, tables), P["lm_head.weight"])


def loss_of(logits, labels):
    # token-mean cross-entropy in float32
    return F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), labels.long().reshape(-1))


def make_adamw(P, lr):
    # MLPerf AdamW: decay 0.1 on matrices, none on 1-D parameters (norm gains).
    mats = [t for t in P.values() if t.dim() >= 2]
    vecs = [t for t in P.values() if t.dim() < 2]
    return torch.optim.AdamW([{"params": mats, "weight_decay": 0.1}, {"params": vecs, "weight_decay": 0.0}],
                             lr=lr, betas=(0.9, 0.95), eps=1e-5, foreach=False)


# ---------------------------------------------------------------------------------------------------
# safetensors writer (json + struct only): 8-byte header length, JSON header padded with spaces to a
# multiple of 8, row-major little-endian data.

ST_DTYPE = {torch.float64: ("F64", "d"), torch.float32: ("F32", "f"), torch.int32: ("I32", "i")}


def write_safetensors(path, tensors, metadata=None):
    header, chunks, offset = {}, [], 0
    if metadata:
        header["__metadata__"] = metadata
    for name, t in tensors.items():
        t = t.detach().contiguous()
        code, fmt = ST_DTYPE[t.dtype]
        values = t.reshape(-1).tolist()
        raw = struct.pack("<%d%s" % (len(values), fmt), *values)
        header[name] = {"dtype": code, "shape": list(t.shape), "data_offsets": [offset, offset + len(raw)]}
        chunks.append(raw)
        offset += len(raw)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(chunks))


# ---------------------------------------------------------------------------------------------------
# golden

GOLDEN_SEED = 1234
GOLDEN_BATCH, GOLDEN_SEQ = 2, 16
GOLDEN_LR = 1e-3
GOLDEN_CLIP = 1.0
GOLDEN_STEPS = 5
# Wider than the MLPerf init for q, k and the head, so the golden model is sensitive: with std 0.02
# the attention scores are ~0.03, the softmax is nearly uniform and an error inside attention (a 1%
# wrong scale, a wrong rope band) moves the logits by only ~4e-5 of their maximum. With these the
# scores are O(1) and the logits span several units.
GOLDEN_WIDER = {"q_proj": 0.15, "k_proj": 0.15, "lm_head": 0.1}


def golden_config():
    # head_dim 8: wavelengths 2*pi*500000^(i/4) = 6.3, 167, 4443, 118k; with original context 256 the
    # bands are < 64 keep, 64..256 smooth, > 256 divide: each branch occurs, none near a boundary.
    return hf_config(dim=32, layers=2, heads=4, kv_heads=2, ffn=96, vocab=256, max_pos=64,
                     rope_scaling=llama3_scaling(original=256))


def golden_values(cfg):
    """Everything golden.safetensors holds, computed from scratch (float32, one thread)."""
    P = init_params(cfg, GOLDEN_SEED, norm_jitter=0.1, wider=GOLDEN_WIDER)
    init = {k: v.detach().clone() for k, v in P.items()}
    g = torch.Generator().manual_seed(GOLDEN_SEED + 1)
    stream = torch.randint(0, cfg["vocab_size"], (GOLDEN_BATCH, GOLDEN_SEQ + 1), generator=g, dtype=torch.int32)
    tokens, labels = stream[:, :-1].contiguous(), stream[:, 1:].contiguous()
    tables = rope_tables(cfg, GOLDEN_SEQ)

    logits = logits_of(cfg, P, tokens, tables)
    loss = loss_of(logits, labels)
    loss.backward()
    out = {"rope_inv_freq": torch.tensor(rope_inv_freq(cfg), dtype=torch.float64), "tokens": tokens,
           "labels": labels, "logits": logits.detach().clone(), "loss": loss.detach().reshape(1)}
    for name, t in P.items():
        out["grad." + name] = t.grad.detach().clone()
        t.grad = None

    # AdamW + clipping on the same batch; each loss is computed before its update.
    opt = make_adamw(P, GOLDEN_LR)
    losses, norms = [], []
    for _ in range(GOLDEN_STEPS):
        opt.zero_grad(set_to_none=True)
        step_loss = loss_of(logits_of(cfg, P, tokens, tables), labels)
        step_loss.backward()
        norms.append(float(torch.nn.utils.clip_grad_norm_(list(P.values()), GOLDEN_CLIP)))
        opt.step()
        losses.append(float(step_loss))
    out["adamw_losses"] = torch.tensor(losses, dtype=torch.float32)
    out["adamw_grad_norms"] = torch.tensor(norms, dtype=torch.float32)
    return init, out


def golden(out_dir):
    torch.set_num_threads(1)
    cfg = golden_config()
    branches = rope_branches(cfg)
    assert set(branches) == {"keep", "smooth", "divide"}, "rope scaling branches: %s" % branches

    init, values = golden_values(cfg)
    init2, values2 = golden_values(cfg)  # determinism: a second run must be bit-identical
    for name in list(values) + list(init):
        a = values[name] if name in values else init[name]
        b = values2[name] if name in values2 else init2[name]
        assert torch.equal(a, b), "not deterministic: " + name
    assert float(values["loss"]) == float(values["adamw_losses"][0])

    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "config.json"), "w") as f:
        json.dump(cfg, f, indent=2)
        f.write("\n")
    meta = {"written_by": "tools/llama_reference.py", "torch_version": torch.__version__}
    write_safetensors(os.path.join(out_dir, "model.safetensors"), init, meta)
    meta.update({"seed": str(GOLDEN_SEED), "adamw": "lr %g betas (0.9, 0.95) eps 1e-5 wd 0.1 (1-D: 0) clip %g steps %d"
                 % (GOLDEN_LR, GOLDEN_CLIP, GOLDEN_STEPS)})
    write_safetensors(os.path.join(out_dir, "golden.safetensors"), values, meta)
    print("rope branches per frequency:", branches)
    print("loss %.7f  adamw losses %s  grad norms %s" % (
        float(values["loss"]), ["%.6f" % x for x in values["adamw_losses"].tolist()],
        ["%.5f" % x for x in values["adamw_grad_norms"].tolist()]))
    print("wrote", out_dir)


# ---------------------------------------------------------------------------------------------------
# step timing (shared/bench/BASELINE.md configurations)

STEP_CONFIGS = {
    # name: (dim, layers, heads, kv, ffn, vocab, seq, batch)
    "A": (256, 4, 8, 2, 768, 8192, 256, 8),
    "B": (512, 8, 8, 2, 1536, 32000, 512, 4),
    "C": (512, 8, 8, 2, 1536, 128256, 512, 4),
}


def step(config, dtype, steps, warmup):
    torch.set_num_threads(2)
    d, layers, heads, kv, ffn, vocab, seq, batch = STEP_CONFIGS[config]
    # rope_scaling as lazygrad's presets (Llama 3.1 defaults).
    cfg = hf_config(d, layers, heads, kv, ffn, vocab, max_pos=8192, rope_scaling=llama3_scaling(8192))
    P = init_params(cfg, 0)
    opt = make_adamw(P, 1e-4)
    g = torch.Generator().manual_seed(1)
    stream = torch.randint(0, vocab, (batch, seq + 1), generator=g, dtype=torch.int32)
    tokens, labels = stream[:, :-1], stream[:, 1:]
    tables = rope_tables(cfg, seq)

    def one_step():
        if dtype == "bf16":
            with torch.autocast("cpu", dtype=torch.bfloat16):
                loss = loss_of(logits_of(cfg, P, tokens, tables), labels)
        else:
            loss = loss_of(logits_of(cfg, P, tokens, tables), labels)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(list(P.values()), 1.0)
        opt.step()
        opt.zero_grad(set_to_none=True)
        return float(loss)

    for _ in range(warmup):
        one_step()
    times = []
    for _ in range(steps):
        t0 = time.perf_counter()
        loss = one_step()
        times.append(time.perf_counter() - t0)
    times.sort()
    n = len(times)
    median = times[n // 2] if n % 2 else 0.5 * (times[n // 2 - 1] + times[n // 2])
    print(json.dumps({"config": config, "dtype": dtype, "median_step_s": round(median, 4),
                      "tokens_per_s": round(batch * seq / median, 1), "steps": steps, "warmup": warmup,
                      "loss": round(loss, 4), "threads": torch.get_num_threads(), "torch": torch.__version__}))


# ---------------------------------------------------------------------------------------------------
# mini: the "mini" MLPerf preset trained for a time budget (docs/mlperf_target.md)

IDX_DTYPES = {1: (torch.uint8, 1), 2: (torch.int8, 1), 3: (torch.int16, 2), 4: (torch.int32, 4),
              5: (torch.int64, 8), 8: (torch.int16, 2)}  # 8 = uint16: read as int16, masked below


def read_indexed(prefix):
    """A Megatron MMIDIDX v1 dataset (src/llm/indexed_dataset.h) -> list of int64 token tensors, one per
    sequence (= document), in file order."""
    with open(prefix + ".idx", "rb") as f:
        idx = f.read()
    assert idx[:9] == b"MMIDIDX\x00\x00", prefix + ".idx: bad magic"
    version, code, n, d = struct.unpack_from("<QBQQ", idx, 9)
    assert version == 1 and code in IDX_DTYPES, "%s.idx: version %d dtype %d" % (prefix, version, code)
    lengths = struct.unpack_from("<%di" % n, idx, 34)
    offsets = struct.unpack_from("<%dq" % n, idx, 34 + 4 * n)
    tdtype, size = IDX_DTYPES[code]
    with open(prefix + ".bin", "rb") as f:
        raw = bytearray(f.read())
    docs = []
    for length, off in zip(lengths, offsets):
        assert off + length * size <= len(raw), prefix + ".bin: too short"
        t = torch.frombuffer(raw, dtype=tdtype, count=length, offset=off).to(torch.int64)
        if code == 8:
            t = t & 0xFFFF
        docs.append(t)
    return docs


class TrainWindows:
    """Training samples as src/llm/sampler.h describes (not its exact permutation): epoch e
    concatenates the documents in a seeded shuffled order, cuts W = (tokens-1)//seq windows of seq+1
    tokens overlapping by one, and visits them in a seeded shuffled order."""

    def __init__(self, docs, seq, seed):
        self.docs, self.seq, self.seed = docs, seq, seed
        self.tokens = sum(len(t) for t in docs)
        self.windows = (self.tokens - 1) // seq
        assert self.windows > 0, "training data shorter than one window"
        self.epoch, self.stream, self.order = -1, None, None

    def sample(self, k):
        e, i = divmod(k, self.windows)
        if e != self.epoch:
            g = torch.Generator().manual_seed(self.seed * 1000003 + e)
            perm = torch.randperm(len(self.docs), generator=g).tolist()
            self.stream = torch.cat([self.docs[j] for j in perm])
            self.order = torch.randperm(self.windows, generator=g)
            self.epoch = e
        w = int(self.order[i])
        return self.stream[w * self.seq: w * self.seq + self.seq + 1]


def eval_windows(docs, seq, samples):
    """The validation documents in file order, windows of seq+1 tokens overlapping by one, the first
    `samples` of them: (n, seq+1) int64."""
    stream = torch.cat(docs)
    n = min(samples, (len(stream) - 1) // seq)
    return torch.stack([stream[w * seq: w * seq + seq + 1] for w in range(n)])


def mini_lr(s, base, end, warmup, max_steps):
    if s <= warmup:
        return base * (s + 1) / (warmup + 1)
    return end + (base - end) * 0.5 * (1 + math.cos(math.pi * (s - warmup) / (max_steps - warmup)))


def mini(a):
    torch.set_num_threads(a.threads)
    torch.manual_seed(a.seed)
    cfg = hf_config(dim=a.dim, layers=a.layers, heads=a.heads, kv_heads=a.kv_heads, ffn=a.ffn, vocab=a.vocab,
                    max_pos=a.seq, rope_theta=500000.0, rope_scaling=llama3_scaling(8192), norm_eps=1e-5,
                    init_std=0.02)
    train = TrainWindows(read_indexed(a.train), a.seq, a.seed)
    val = eval_windows(read_indexed(a.eval), a.seq, a.eval_samples)
    assert len(val) == a.eval_samples, "validation data holds only %d windows" % len(val)
    P = init_params(cfg, a.seed)
    mats = [t for t in P.values() if t.dim() >= 2]
    vecs = [t for t in P.values() if t.dim() < 2]
    opt = torch.optim.AdamW([{"params": mats, "weight_decay": a.weight_decay},
                             {"params": vecs, "weight_decay": 0.0}],
                            lr=a.lr, betas=(0.9, 0.95), eps=1e-5, foreach=False)
    tables = rope_tables(cfg, a.seq)
    params = list(P.values())
    end_lr = a.end_lr_factor * a.lr
    bf16 = a.dtype == "bf16"

    def forward_loss(tokens, labels):
        if bf16:
            with torch.autocast("cpu", dtype=torch.bfloat16):
                return loss_of(logits_of(cfg, P, tokens, tables), labels)
        return loss_of(logits_of(cfg, P, tokens, tables), labels)

    def evaluate():
        total = 0.0
        with torch.no_grad():
            for b in range(0, len(val), a.eval_batch):
                w = val[b: b + a.eval_batch]
                total += float(forward_loss(w[:, :-1], w[:, 1:])) * len(w)
        return total / len(val)

    info = {"mode": "mini", "dtype": a.dtype, "seed": a.seed, "threads": torch.get_num_threads(),
            "torch": torch.__version__, "train_windows_per_epoch": train.windows, "eval_windows": len(val),
            "params": sum(t.numel() for t in params), "budget_s": a.minutes * 60}
    print(json.dumps(info), file=sys.stderr, flush=True)

    budget = a.minutes * 60.0
    train_seconds, step, samples, last_loss = 0.0, 0, 0, float("nan")
    while train_seconds < budget and step < a.max_steps:
        t0 = time.perf_counter()
        batch = torch.stack([train.sample(samples + i) for i in range(a.batch)])
        for group in opt.param_groups:
            group["lr"] = mini_lr(step, a.lr, end_lr, a.warmup, a.max_steps)
        loss = forward_loss(batch[:, :-1], batch[:, 1:])
        loss.backward()
        norm = torch.nn.utils.clip_grad_norm_(params, a.clip)
        opt.step()
        opt.zero_grad(set_to_none=True)
        last_loss = float(loss)
        train_seconds += time.perf_counter() - t0
        step += 1
        samples += a.batch
        if a.log_every and step % a.log_every == 0:
            print(json.dumps({"step": step, "train_loss": round(last_loss, 4), "grad_norm": round(float(norm), 4),
                              "train_seconds": round(train_seconds, 2)}), file=sys.stderr, flush=True)
        if samples % a.eval_every == 0:
            t1 = time.perf_counter()
            ev = evaluate()
            print(json.dumps({"samples": samples, "eval_loss": round(ev, 4), "train_seconds": round(train_seconds, 1),
                              "eval_seconds": round(time.perf_counter() - t1, 1)}), flush=True)
    print(json.dumps({"done": True, "steps": step, "samples": samples, "train_seconds": round(train_seconds, 1),
                      "last_train_loss": round(last_loss, 4)}), file=sys.stderr, flush=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="mode", required=True)
    g = sub.add_parser("golden", help="write the micro model and its golden values")
    g.add_argument("--out", required=True, help="output directory (tests/llm/data/llama_golden)")
    s = sub.add_parser("step", help="time one training step of a BASELINE.md configuration")
    s.add_argument("--config", choices=sorted(STEP_CONFIGS), required=True)
    s.add_argument("--dtype", choices=["fp32", "bf16"], default="fp32")
    s.add_argument("--steps", type=int, default=5, help="timed steps (median reported)")
    s.add_argument("--warmup", type=int, default=2, help="untimed steps first")
    m = sub.add_parser("mini", help="train the mini MLPerf preset for a time budget, evaluating as it goes")
    m.add_argument("--train", required=True, help="training dataset prefix (PREFIX.bin, PREFIX.idx)")
    m.add_argument("--eval", required=True, help="validation dataset prefix")
    m.add_argument("--minutes", type=float, default=5.0, help="training-time budget (evaluation excluded)")
    m.add_argument("--seed", type=int, default=0)
    m.add_argument("--threads", type=int, default=2)
    m.add_argument("--dtype", choices=["bf16", "fp32"], default="bf16",
                   help="bf16: autocast bf16 compute, fp32 master weights; fp32: all fp32")
    m.add_argument("--dim", type=int, default=128)
    m.add_argument("--layers", type=int, default=2)
    m.add_argument("--heads", type=int, default=4)
    m.add_argument("--kv-heads", type=int, default=2)
    m.add_argument("--ffn", type=int, default=384)
    m.add_argument("--vocab", type=int, default=128256)
    m.add_argument("--seq", type=int, default=128)
    m.add_argument("--batch", type=int, default=16, help="global batch (no accumulation)")
    m.add_argument("--lr", type=float, default=3e-3)
    m.add_argument("--end-lr-factor", type=float, default=0.1)
    m.add_argument("--warmup", type=int, default=20)
    m.add_argument("--max-steps", type=int, default=2000)
    m.add_argument("--weight-decay", type=float, default=0.1)
    m.add_argument("--clip", type=float, default=1.0)
    m.add_argument("--eval-every", type=int, default=512, help="sequences between evals (a multiple of --batch)")
    m.add_argument("--eval-samples", type=int, default=128)
    m.add_argument("--eval-batch", type=int, default=16)
    m.add_argument("--log-every", type=int, default=0, help="train-loss line on stderr every N steps (0: none)")
    a = ap.parse_args()
    if a.mode == "golden":
        golden(a.out)
    elif a.mode == "mini":
        if a.eval_every % a.batch or a.minutes <= 0 or a.warmup >= a.max_steps:
            ap.error("--eval-every must be a multiple of --batch, --minutes > 0, --warmup < --max-steps")
        mini(a)
    else:
        if a.steps < 1 or a.warmup < 0:
            ap.error("--steps must be >= 1 and --warmup >= 0")
        step(a.config, a.dtype, a.steps, a.warmup)


if __name__ == "__main__":
    main()
