#!/usr/bin/env python3
"""Measure a GPU's kernel rates for a luwusim GPU profile (needs PyTorch with CUDA; run on the GPU).

Writes into OUTDIR:
  gemm.csv          m,n,k,dtype,tflops: one GEMM shape at a time (torch.mm, CUDA events, median of
                    5 timed loops after a warm-up, operands from randn), the input of
                    `luwusim calibrate-gpu --gemm-csv` (it reads m, n, k and tflops)
  batched_gemm.csv  batch,m,n,k,dtype,tflops: torch.bmm at attention's shapes
  rates.json        the device, its clocks and power limit, HBM streams (copy, read, write, triad),
                    host <-> GPU copies pinned and pageable (a Custom-175B checkpoint, 403 MB),
                    transformer elementwise kernels (bytes counted as the minimum each must move),
                    attention (fused SDPA and unfused), torch's fused AdamW, a sustained GEMM
Progress on stderr.  Sections that fail are recorded in rates.json with their error and the rest
go on.

  python3 bench/gpu_rates.py OUTDIR [--quick]
"""
import json
import math
import os
import statistics
import subprocess
import sys
import time
import traceback

import torch
import torch.nn.functional as F

QUICK = "--quick" in sys.argv
TARGET_LOOP_S = 0.01 if QUICK else 0.025
REPEATS = 3 if QUICK else 5


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def time_loop(fn, target_s=None):
    """Seconds per call: warm-up, size a loop to about target_s, median of REPEATS timed loops."""
    target_s = target_s or TARGET_LOOP_S
    fn()
    torch.cuda.synchronize()
    start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    fn()
    stop.record()
    stop.synchronize()
    once = max(start.elapsed_time(stop) * 1e-3, 1e-6)
    iters = max(2, min(1000, int(target_s / once)))
    times = []
    for _ in range(REPEATS):
        start.record()
        for _ in range(iters):
            fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop) * 1e-3 / iters)
    return statistics.median(times)


DTYPES = {"bf16": torch.bfloat16, "fp16": torch.float16, "fp32": torch.float32}


def gemm_rate(m, n, k, dtype="bf16"):
    a = torch.randn(m, k, device="cuda", dtype=DTYPES[dtype])
    b = torch.randn(k, n, device="cuda", dtype=DTYPES[dtype])
    c = torch.empty(m, n, device="cuda", dtype=DTYPES[dtype])
    s = time_loop(lambda: torch.mm(a, b, out=c))
    del a, b, c
    return 2.0 * m * n * k / s / 1e12


def gemm_shapes():
    shapes = []
    # MAMF's best shapes for Hopper and Ampere (stas00/ml-engineering's table) and large squares.
    shapes += [(2048, 2048, 13312), (1024, 10240, 5120), (4096, 4096, 4096), (8192, 8192, 8192),
               (16384, 16384, 16384)]
    # Square fall-off.
    shapes += [(s, s, s) for s in (256, 512, 768, 1024, 1536, 2048, 3072, 6144, 12288)]
    # Wave quantization: m = 2048 (16 tiles of 128), n over 8..32 tiles, k = 8192.
    shapes += [(2048, 128 * t, 8192) for t in range(8, 33)]
    # Transformer layers: tokens T, hidden h, tensor-parallel t; forward, data-gradient and
    # weight-gradient GEMMs of QKV, attention projection, MLP up and down.
    for h, tokens, tp in ((2048, 2048, 1), (2048, 8192, 1), (4096, 8192, 1), (5120, 8192, 1),
                          (12288, 2048, 1), (12288, 2048, 8), (12288, 8192, 8), (12288, 32768, 1)):
        for out, inp in ((3 * h // tp, h), (h, h // tp), (4 * h // tp, h), (h, 4 * h // tp)):
            shapes.append((tokens, out, inp))   # forward: [T, in] x [in, out]
            shapes.append((tokens, inp, out))   # data gradient: [T, out] x [out, in]
            shapes.append((inp, out, tokens))   # weight gradient: [in, T] x [T, out]
    seen, unique = set(), []
    for s in shapes:
        if s not in seen:
            seen.add(s)
            unique.append(s)
    return unique


def section_gemm(outdir, result):
    shapes = gemm_shapes()
    if QUICK:
        shapes = shapes[:12]
    rows = []
    t0 = time.time()
    for i, (m, n, k) in enumerate(shapes):
        r = gemm_rate(m, n, k)
        rows.append((m, n, k, "bf16", r))
        if i % 10 == 0:
            log(f"gemm {i + 1}/{len(shapes)} {m}x{n}x{k}: {r:.1f} TFLOP/s ({time.time() - t0:.0f} s)")
    for m, n, k in ((2048, 2048, 13312), (8192, 8192, 8192)):
        rows.append((m, n, k, "fp16", gemm_rate(m, n, k, "fp16")))
    torch.backends.cuda.matmul.allow_tf32 = False
    rows.append((8192, 8192, 8192, "fp32", gemm_rate(8192, 8192, 8192, "fp32")))
    torch.backends.cuda.matmul.allow_tf32 = True
    rows.append((8192, 8192, 8192, "tf32", gemm_rate(8192, 8192, 8192, "fp32")))
    torch.backends.cuda.matmul.allow_tf32 = False
    with open(os.path.join(outdir, "gemm.csv"), "w") as f:
        f.write(f"# torch.mm on {torch.cuda.get_device_name()}, torch {torch.__version__}, "
                f"{time.strftime('%Y-%m-%d')}: median of {REPEATS} timed loops after a warm-up, randn operands\n")
        f.write("m,n,k,dtype,tflops\n")
        for m, n, k, d, r in rows:
            f.write(f"{m},{n},{k},{d},{r:.2f}\n")
    best = max((r for r in rows if r[3] == "bf16"), key=lambda r: r[4])
    result["gemm"] = {"shapes": len(rows), "best_bf16": {"m": best[0], "n": best[1], "k": best[2], "tflops": best[4]},
                      "other_dtypes": [{"m": r[0], "n": r[1], "k": r[2], "dtype": r[3], "tflops": r[4]}
                                       for r in rows if r[3] != "bf16"]}


def section_batched(outdir, result):
    rows = []
    # Attention's score and context GEMMs: batch = micro-batch x heads (per tensor-parallel rank).
    for batch, seq, d in ((16, 2048, 128), (48, 2048, 128), (64, 2048, 64), (32, 2048, 128), (12, 4096, 128)):
        for m, n, k in ((seq, seq, d), (seq, d, seq)):
            a = torch.randn(batch, m, k, device="cuda", dtype=torch.bfloat16)
            b = torch.randn(batch, k, n, device="cuda", dtype=torch.bfloat16)
            s = time_loop(lambda: torch.bmm(a, b))
            rows.append((batch, m, n, k, 2.0 * batch * m * n * k / s / 1e12))
            del a, b
    with open(os.path.join(outdir, "batched_gemm.csv"), "w") as f:
        f.write("batch,m,n,k,dtype,tflops\n")
        for batch, m, n, k, r in rows:
            f.write(f"{batch},{m},{n},{k},bf16,{r:.2f}\n")
    result["batched_gemm"] = {"shapes": len(rows)}


def section_hbm(result):
    n = (1 << 30) if not QUICK else (1 << 26)   # 2 GiB of bf16 per tensor
    x = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    y = torch.empty_like(x)
    z = torch.empty_like(x)
    nbytes = x.numel() * x.element_size()
    rates = {}
    s = time_loop(lambda: y.copy_(x), 0.1)
    rates["copy"] = 2 * nbytes / s
    s = time_loop(lambda: torch.sum(x, dtype=torch.float32), 0.1)
    rates["read"] = nbytes / s
    s = time_loop(lambda: y.fill_(1.0), 0.1)
    rates["write"] = nbytes / s
    s = time_loop(lambda: torch.add(x, y, alpha=0.5, out=z), 0.1)
    rates["triad"] = 3 * nbytes / s
    result["hbm_bytes_per_s"] = rates
    result["hbm_tensor_bytes"] = nbytes


def section_host_copies(result):
    """Host <-> GPU copies of one Custom-175B activation checkpoint (16 x 1024 x 12288 bf16, 403 MB),
    pinned and pageable.  DeepSpeed 0.9.3's cpu_checkpointing copies with .to('cpu') into a new
    pageable tensor and back with .to('cuda'); its swappers copy through pinned buffers."""
    n = 16 * 1024 * 12288 if not QUICK else (1 << 24)
    gpu = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    pinned = torch.empty(n, dtype=torch.bfloat16, pin_memory=True)
    pageable = torch.empty(n, dtype=torch.bfloat16)
    nbytes = n * gpu.element_size()

    def wall(fn):
        fn()
        torch.cuda.synchronize()
        times = []
        for _ in range(REPEATS):
            t0 = time.perf_counter()
            fn()
            torch.cuda.synchronize()
            times.append(time.perf_counter() - t0)
        return statistics.median(times)

    rates = {
        "d2h_pinned": nbytes / wall(lambda: pinned.copy_(gpu, non_blocking=True)),
        "d2h_pageable_preallocated": nbytes / wall(lambda: pageable.copy_(gpu)),
        "d2h_pageable_new_tensor": nbytes / wall(lambda: gpu.to("cpu")),
        "h2d_pinned": nbytes / wall(lambda: gpu.copy_(pinned, non_blocking=True)),
        "h2d_pageable": nbytes / wall(lambda: gpu.copy_(pageable)),
    }
    result["host_copy_bytes_per_s"] = rates
    result["host_copy_bytes"] = nbytes
    log("host copies (GB/s): " + ", ".join(f"{k} {v / 1e9:.1f}" for k, v in rates.items()))


def section_elementwise(result):
    out = {}
    for label, tokens, h in (("T8192_h12288", 8192, 12288), ("T8192_h2048", 8192, 2048), ("T2048_h2048", 2048, 2048)):
        x = torch.randn(tokens, h, device="cuda", dtype=torch.bfloat16)
        g = torch.randn_like(x)
        w = torch.ones(h, device="cuda", dtype=torch.bfloat16)
        bias = torch.zeros(h, device="cuda", dtype=torch.bfloat16)
        e = x.numel() * 2
        rows = {}

        def rate(name, fn, nbytes):
            s = time_loop(fn)
            rows[name] = {"seconds": s, "bytes": nbytes, "bytes_per_s": nbytes / s}

        rate("layer_norm_fwd", lambda: F.layer_norm(x, (h,), w, bias), 2 * e)
        xr = x.detach().requires_grad_(True)
        mean = x.float().mean(-1, keepdim=True)
        rstd = torch.rsqrt(x.float().var(-1, unbiased=False, keepdim=True) + 1e-5)
        rate("layer_norm_bwd", lambda: torch.ops.aten.native_layer_norm_backward(
            g, xr, (h,), mean, rstd, w, bias, [True, True, True]), 3 * e)
        rate("gelu_fwd", lambda: F.gelu(x, approximate="tanh"), 2 * e)
        rate("gelu_bwd", lambda: torch.ops.aten.gelu_backward(g, x, approximate="tanh"), 3 * e)
        rate("dropout_fwd", lambda: F.dropout(x, 0.1, training=True), 2 * e + x.numel())
        rate("residual_add", lambda: x + g, 3 * e)
        out[label] = rows
        del x, g, xr
    # Softmax over attention scores [b * heads, s, s].
    for label, bh, seq in (("bh48_s2048", 48, 2048), ("bh16_s2048", 16, 2048)):
        sc = torch.randn(bh, seq, seq, device="cuda", dtype=torch.bfloat16)
        y = torch.softmax(sc, -1)
        g = torch.randn_like(sc)
        e = sc.numel() * 2
        rows = {}
        s = time_loop(lambda: torch.softmax(sc, -1))
        rows["softmax_fwd"] = {"seconds": s, "bytes": 2 * e, "bytes_per_s": 2 * e / s}
        s = time_loop(lambda: torch._softmax_backward_data(g, y, -1, torch.bfloat16))
        rows["softmax_bwd"] = {"seconds": s, "bytes": 3 * e, "bytes_per_s": 3 * e / s}
        s = time_loop(lambda: F.dropout(sc, 0.1, training=True))
        rows["dropout_fwd"] = {"seconds": s, "bytes": 2 * e + sc.numel(), "bytes_per_s": (2 * e + sc.numel()) / s}
        out[label] = rows
        del sc, y, g
    result["elementwise"] = out


def section_attention(result):
    out = []
    for b, heads, seq, d in ((4, 12, 2048, 128), (1, 16, 2048, 128), (8, 32, 2048, 64), (1, 96, 2048, 128)):
        q = torch.randn(b, heads, seq, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        k = torch.randn_like(q, requires_grad=True)
        v = torch.randn_like(q, requires_grad=True)
        flops_full = 4.0 * b * heads * seq * seq * d  # QK^T and PV, every score
        for causal in (False, True):
            def fwd():
                return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
            s_f = time_loop(fwd)
            o = fwd()
            go = torch.randn_like(o)
            s_b = time_loop(lambda: torch.autograd.grad(o, (q, k, v), go, retain_graph=True))
            counted = flops_full / (2 if causal else 1)
            out.append({"kind": "sdpa", "b": b, "heads": heads, "seq": seq, "d": d, "causal": causal,
                        "fwd_s": s_f, "bwd_s": s_b, "fwd_tflops": counted / s_f / 1e12,
                        "bwd_tflops": 2.5 * counted / s_b / 1e12})
        with torch.no_grad():
            qf, kf, vf = q.detach().reshape(b * heads, seq, d), k.detach().reshape(b * heads, seq, d), v.detach().reshape(b * heads, seq, d)
            scale = 1.0 / math.sqrt(d)

            def unfused():
                p = torch.softmax(torch.bmm(qf, kf.transpose(1, 2)) * scale, -1)
                return torch.bmm(p, vf)
            s_u = time_loop(unfused)
        out.append({"kind": "unfused", "b": b, "heads": heads, "seq": seq, "d": d, "causal": False,
                    "fwd_s": s_u, "fwd_tflops": flops_full / s_u / 1e12})
        log(f"attention b{b} h{heads} s{seq} d{d}: sdpa {out[-3]['fwd_tflops']:.0f} TFLOP/s, unfused {out[-1]['fwd_tflops']:.0f}")
        del q, k, v
    result["attention"] = out


def section_adam(result):
    n = (1 << 28) if not QUICK else (1 << 22)
    rows = {}
    for fused in (True, False):
        p = torch.nn.Parameter(torch.randn(n, device="cuda", dtype=torch.float32))
        p.grad = torch.randn_like(p)
        opt = torch.optim.AdamW([p], lr=1e-4, fused=fused, foreach=None if fused else True)
        s = time_loop(opt.step, 0.1)
        rows["fused" if fused else "foreach"] = {"params": n, "seconds_per_step": s, "params_per_s": n / s,
                                                 "bytes_per_s_at_28B": 28.0 * n / s}
        del p, opt
        torch.cuda.empty_cache()
    result["adamw_fp32"] = rows


def nvml_sample():
    try:
        import pynvml
        pynvml.nvmlInit()
        h = pynvml.nvmlDeviceGetHandleByIndex(0)
        return {"sm_clock_mhz": pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM),
                "mem_clock_mhz": pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_MEM),
                "power_w": pynvml.nvmlDeviceGetPowerUsage(h) / 1000.0,
                "temperature_c": pynvml.nvmlDeviceGetTemperature(h, pynvml.NVML_TEMPERATURE_GPU)}
    except Exception as e:  # no NVML: the section records why
        return {"error": repr(e)}


def section_sustained(result):
    seconds = 3 if QUICK else 15
    m = 8192
    a = torch.randn(m, m, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(m, m, device="cuda", dtype=torch.bfloat16)
    c = torch.empty(m, m, device="cuda", dtype=torch.bfloat16)
    windows = []
    end = time.time() + seconds
    while time.time() < end:
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(50):
            torch.mm(a, b, out=c)
        stop.record()
        stop.synchronize()
        w = {"tflops": 50 * 2.0 * m ** 3 / (start.elapsed_time(stop) * 1e-3) / 1e12}
        w.update(nvml_sample())
        windows.append(w)
    result["sustained_8192_bf16"] = windows


def device_info():
    p = torch.cuda.get_device_properties(0)
    info = {"name": p.name, "multiprocessors": p.multi_processor_count, "memory_bytes": p.total_memory,
            "torch": torch.__version__, "cuda": torch.version.cuda, "date": time.strftime("%Y-%m-%d")}
    try:
        q = subprocess.run(["nvidia-smi", "--query-gpu=driver_version,power.limit,clocks.max.sm,clocks.max.mem",
                            "--format=csv,noheader"], capture_output=True, text=True, timeout=30)
        info["nvidia_smi"] = q.stdout.strip()
    except Exception as e:
        info["nvidia_smi"] = repr(e)
    return info


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if len(args) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    outdir = args[0]
    os.makedirs(outdir, exist_ok=True)
    torch.backends.cuda.matmul.allow_tf32 = False
    result = {"device": device_info(), "idle": nvml_sample(), "errors": {}}
    log(f"{result['device']['name']}: {result['device']['nvidia_smi']}")
    for name, fn in (("gemm", lambda: section_gemm(outdir, result)), ("batched", lambda: section_batched(outdir, result)),
                     ("hbm", lambda: section_hbm(result)),
                     ("host_copies", lambda: section_host_copies(result)), ("elementwise", lambda: section_elementwise(result)),
                     ("attention", lambda: section_attention(result)), ("adam", lambda: section_adam(result)),
                     ("sustained", lambda: section_sustained(result))):
        t0 = time.time()
        try:
            fn()
        except Exception:
            result["errors"][name] = traceback.format_exc()
            log(f"{name} failed:\n{result['errors'][name]}")
        torch.cuda.empty_cache()
        log(f"{name}: {time.time() - t0:.1f} s")
        with open(os.path.join(outdir, "rates.json"), "w") as f:
            json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
