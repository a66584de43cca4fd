#!/usr/bin/env python3
"""The least time a run's kernels can take on a device, from a PROFILE_CSV file (runtime/profile.h).

Each kernel launch needs at least max(flops / peak FLOP/s, bytes / peak bandwidth): its useful
work (schedule/kernel_cost.h) at the device's peaks. Summed over the launches, that bounds the
run's kernel time from below, and the FLOPs over that bound are the highest MFU the run's kernels
allow. The file may come from a device that runs nothing (DEVICE=CUDANULL: the times are 0, the
costs are real), so the bound of a GPU step can be had without a GPU.

  python3 tools/roofline.py RUN.csv [--minus BASE.csv] [--divide N] [--tflops 989] [--gbs 4800] [--sms 132] [--top 15]

With measured times (a PROFILE_CSV from a GPU run) the kernels are listed longest first, each with
the share of its measured time its bound is (how close it runs to the roofline); without (a
CUDANULL run) largest bound first.

--minus subtracts another run's launches kernel by kernel and --divide divides what is left: a run
of 3 steps minus a run of 1 step, divided by 2, is one step without the first step's extras
(initialization, the capture) or the evaluation both runs share. The defaults are an H200's dense
bf16 peak and its HBM3e bandwidth.

A GPU run's file (CUDA, CUDANULL) also gives each kernel's launch: its grid blocks and threads per
block. The listing shows them, and marks with "!" a launch that cannot use the whole GPU: fewer
blocks than the GPU's SMs (--sms, 132 on an H100 or H200 SXM), or, bound by memory, fewer than 512
threads per SM (too few loads in flight to cover the memory's latency; a tensor-core matmul keeps
its few warps busy with math). Such a kernel runs far from its bound however good its code; the
last line sums them.
"""
import argparse
import csv
import sys

FIELDS = ["device", "kernel", "launches", "seconds", "flops_per_launch", "bytes_per_launch"]
LAUNCH = ["blocks", "threads"]  # since 2026-12-06; files written before have no launch columns


def read(path):
    """{(device, kernel, flops, bytes, blocks, threads): [launches, seconds]} of a PROFILE_CSV file
    (blocks and threads 0: a host program, or a file without them)."""
    try:
        with open(path, newline="") as f:
            reader = csv.DictReader(f)
            header = reader.fieldnames or []
            rows = list(reader)
    except OSError as e:
        sys.exit(f"roofline.py: cannot read {path}: {e.strerror}")
    if list(header) not in (FIELDS, FIELDS + LAUNCH):
        sys.exit(f"roofline.py: {path} is not a PROFILE_CSV file (its header should be {','.join(FIELDS + LAUNCH)})")
    out = {}
    for i, r in enumerate(rows, start=2):
        try:
            key = (r["device"], r["kernel"], float(r["flops_per_launch"]), float(r["bytes_per_launch"]),
                   int(r.get("blocks", 0)), int(r.get("threads", 0)))
            launches, seconds = int(r["launches"]), float(r["seconds"])
        except ValueError:
            sys.exit(f"roofline.py: {path} line {i}: launches, seconds, flops, bytes, blocks and threads must be numbers")
        entry = out.setdefault(key, [0, 0.0])
        entry[0] += launches
        entry[1] += seconds
    return out


def main():
    p = argparse.ArgumentParser(description="the least kernel time of a PROFILE_CSV run at a device's peaks")
    p.add_argument("run")
    p.add_argument("--minus", help="a PROFILE_CSV run whose launches are subtracted, kernel by kernel")
    p.add_argument("--divide", type=float, default=1, help="divide the launches by this (steps in the difference)")
    p.add_argument("--tflops", type=float, default=989, help="peak TFLOP/s (default: H200 dense bf16)")
    p.add_argument("--gbs", type=float, default=4800, help="peak memory bandwidth in GB/s (default: H200)")
    p.add_argument("--sms", type=int, default=132, help="the GPU's SMs, for launches too small to fill it (default: H100/H200 SXM)")
    p.add_argument("--top", type=int, default=15, help="kernels listed (by their bound)")
    a = p.parse_args()
    if a.divide <= 0 or a.tflops <= 0 or a.gbs <= 0 or a.sms <= 0:
        sys.exit("roofline.py: --divide, --tflops, --gbs and --sms must be positive")
    run = read(a.run)
    if a.minus:
        for key, (launches, seconds) in read(a.minus).items():
            entry = run.setdefault(key, [0, 0.0])
            entry[0] -= launches
            entry[1] -= seconds
    peak, bw = a.tflops * 1e12, a.gbs * 1e9
    rows, flops, compute, memory, measured = [], 0.0, 0.0, 0.0, 0.0
    def small(blocks, threads, compute_bound):
        """A GPU launch that cannot fill the GPU: fewer blocks than SMs, or (bound by memory) fewer
        than 512 threads an SM."""
        return blocks > 0 and (blocks < a.sms or (not compute_bound and blocks * threads < 512 * a.sms))

    small_n, small_bound = 0, 0.0
    for (device, kernel, f, b, blocks, threads), (launches, seconds) in run.items():
        n = launches / a.divide
        if n < 0:
            sys.exit(f"roofline.py: {kernel} ran fewer times in {a.run} than in {a.minus}: not a later run of the same program")
        if n == 0:
            continue
        bound = n * max(f / peak, b / bw)
        compute_bound = f / peak >= b / bw
        rows.append((seconds / a.divide, bound, kernel, n, f, b, compute_bound, blocks, threads))
        if small(blocks, threads, compute_bound):
            small_n += 1
            small_bound += bound
        flops += n * f
        measured += seconds / a.divide
        if compute_bound:
            compute += bound
        else:
            memory += bound
    total = compute + memory
    if total <= 0:
        sys.exit("roofline.py: no kernel work in the run")
    # With measured times (a run on a device that runs kernels): the longest first, with the share
    # of its time the bound is; else (CUDANULL: every time 0) the largest bound first.
    timed = measured > 0
    rows.sort(key=lambda r: (r[0], r[1]) if timed else r[1], reverse=True)
    print(f"peaks: {a.tflops:g} TFLOP/s, {a.gbs:g} GB/s")
    timed_head = f"{'measured ms':>11} " if timed else ""
    share_head = f"{'bound %':>8} " if timed else ""
    # blocks x threads per block, when the file has launches (a GPU run)
    gpu = any(r[7] > 0 for r in rows)
    grid_head = f"{'blocks x threads':>17} " if gpu else ""
    print(f"{timed_head}{'bound ms':>9} {share_head}{'launches':>8} {'GFLOP':>10} {'GB':>8} {grid_head} bound by  kernel")
    for seconds, bound, kernel, n, f, b, c, blocks, threads in rows[: a.top]:
        timed_col = f"{seconds * 1e3:11.3f} " if timed else ""
        share_col = (f"{100 * bound / seconds:7.1f}% " if seconds > 0 else f"{'-':>8} ") if timed else ""
        grid = (f"{blocks} x {threads}" if blocks > 0 else "-") + ("!" if small(blocks, threads, c) else " ")
        grid_col = f"{grid:>17} " if gpu else ""
        print(f"{timed_col}{bound * 1e3:9.3f} {share_col}{n:8.3g} {f / 1e9:10.4g} {b / 1e9:8.4g} {grid_col} "
              f"{'compute' if c else 'memory ':8s}  {kernel}")
    if len(rows) > a.top:
        rest_bound = sum(r[1] for r in rows[a.top:])
        rest_time = f", measured {sum(r[0] for r in rows[a.top:]) * 1e3:.3f} ms" if timed else ""
        print(f"  ... {len(rows) - a.top} more kernels: bound {rest_bound * 1e3:.3f} ms{rest_time}")
    print(f"total: {flops / 1e12:.4g} TFLOP; least kernel time {total * 1e3:.3f} ms "
          f"({compute * 1e3:.3f} ms in compute-bound kernels, {memory * 1e3:.3f} ms in memory-bound ones); "
          f"MFU at most {100 * flops / total / peak:.1f}%")
    if measured > 0:  # 0 from a device that runs nothing (CUDANULL)
        print(f"measured kernel time {measured * 1e3:.3f} ms: {100 * total / measured:.1f}% of it is the bound")
    if gpu:
        print(f"! launches that cannot fill a GPU of {a.sms} SMs (fewer blocks than SMs, or bound by memory with "
              f"fewer than 512 threads an SM): {small_n} kernels, bound {small_bound * 1e3:.3f} ms")


if __name__ == "__main__":
    main()
