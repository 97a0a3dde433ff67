#!/usr/bin/env python3
"""Time one transformer block's forward and backward on a GPU, in PyTorch eager, bf16: the
measurement `luwusim trace show T.json --gpu PROFILE` predicts (docs/compare.md, "One block on an
H100").  Needs PyTorch with CUDA.

The block is the GPT/OPT block of luwusim's traces (workloads/kernels.hpp), kernel for kernel where
eager PyTorch allows: layer norm, QKV (with bias), attention, output projection, residual add,
layer norm, FFN up (bias), GELU (tanh), FFN down (bias), residual add.  Attention is either
unfused (scores by torch.matmul, a causal mask filled out of place, i.e. a clone and a fill with a
broadcast mask, and a softmax: luwusim's --attention-scores masked-fill) or fused
(scaled_dot_product_attention, causal; luwusim's --memory-efficient-attention).  Dropout is left out of both (p = 0: luwusim counts it inside the
residual's 3 passes).  Hugging Face-style head reshapes copy q, k, v and the context, and q is
scaled (5 copies of T x h: --attention-layout-copies 5).  luwusim's prediction of the same block:
trace gen --model M --micro-batch B --seq 2048 --dtype bf16 --attention-scores masked-fill
--attention-layout-copies 5 (tests/sim/block_measurement_test.cpp holds it against block.json).

  python3 bench/gpu_block.py OUT.json
Writes one JSON object: per case the median forward and backward time of 10 timed steps after 3
warm-ups (CUDA events), and from one profiled step (torch.profiler) the sum of the GPU kernels'
times and their count.
"""
import json
import statistics
import sys
import time

import torch
import torch.nn.functional as F

CASES = [
    # name, hidden, heads, ffn, micro-batch, sequence, fused attention
    ("opt-1.3b mb8 s2048 unfused", 2048, 32, 8192, 8, 2048, False),
    ("opt-1.3b mb8 s2048 fused", 2048, 32, 8192, 8, 2048, True),
    ("gpt3-175b mb1 s2048 unfused", 12288, 96, 49152, 1, 2048, False),
    ("gpt3-175b mb1 s2048 fused", 12288, 96, 49152, 1, 2048, True),
]


def make_block(h, heads, ffn):
    def p(*shape, scale=0.02):
        return (torch.randn(*shape, device="cuda", dtype=torch.bfloat16) * scale).requires_grad_(True)

    return {"ln1_w": p(h, scale=1.0), "ln1_b": p(h), "qkv_w": p(3 * h, h), "qkv_b": p(3 * h),
            "out_w": p(h, h), "out_b": p(h), "ln2_w": p(h, scale=1.0), "ln2_b": p(h),
            "up_w": p(ffn, h), "up_b": p(ffn), "down_w": p(h, ffn), "down_b": p(h), "heads": heads}


def block_forward(x, w, b, s, fused, mask):
    h = x.shape[-1]
    a = w["heads"]
    d = h // a
    y = F.layer_norm(x, (h,), w["ln1_w"], w["ln1_b"])
    qkv = F.linear(y, w["qkv_w"], w["qkv_b"])
    q, k, v = qkv.split(h, dim=-1)

    def heads_first(t):  # [b s, h] -> [b, a, s, d], contiguous (as Hugging Face's _shape does)
        return t.view(b, s, a, d).transpose(1, 2).contiguous()

    q, k, v = heads_first(q), heads_first(k), heads_first(v)
    if fused:
        ctx = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    else:
        scores = torch.matmul(q * (d ** -0.5), k.transpose(-1, -2))
        scores = scores.masked_fill(mask, float("-inf"))
        ctx = torch.matmul(torch.softmax(scores, dim=-1), v)
    ctx = ctx.transpose(1, 2).reshape(b * s, h)
    x = x + F.linear(ctx, w["out_w"], w["out_b"])
    y = F.layer_norm(x, (h,), w["ln2_w"], w["ln2_b"])
    y = F.linear(F.gelu(F.linear(y, w["up_w"], w["up_b"]), approximate="tanh"), w["down_w"], w["down_b"])
    return x + y


def time_case(h, heads, ffn, b, s, fused):
    w = make_block(h, heads, ffn)
    params = [t for t in w.values() if isinstance(t, torch.Tensor)]
    x = torch.randn(b * s, h, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    grad = torch.randn(b * s, h, device="cuda", dtype=torch.bfloat16)
    mask = torch.ones(s, s, device="cuda", dtype=torch.bool).triu(1)
    start, mid, end = (torch.cuda.Event(enable_timing=True) for _ in range(3))
    fwd, bwd = [], []
    for i in range(13):
        for t in params + [x]:
            t.grad = None
        start.record()
        out = block_forward(x, w, b, s, fused, mask)
        mid.record()
        out.backward(grad)
        end.record()
        end.synchronize()
        if i >= 3:
            fwd.append(start.elapsed_time(mid) * 1e-3)
            bwd.append(mid.elapsed_time(end) * 1e-3)
    result = {"forward_s": statistics.median(fwd), "backward_s": statistics.median(bwd)}
    for t in params + [x]:
        t.grad = None
    try:  # the kernels' own time: what the GPU was busy with, launch gaps left out
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
            out = block_forward(x, w, b, s, fused, mask)
            out.backward(grad)
            torch.cuda.synchronize()
        kernels = [(e.name, e.time_range.elapsed_us() * 1e-6) for e in prof.events()
                   if e.device_type == torch.autograd.DeviceType.CUDA]
        result["profiled_kernel_s"] = sum(t for _, t in kernels)
        result["profiled_kernels"] = len(kernels)
        result["top_kernels"] = [{"name": n[:120], "s": t} for n, t in sorted(kernels, key=lambda k: -k[1])[:15]]
    except Exception as e:
        result["profiler_error"] = repr(e)
    return result


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    torch.backends.cuda.matmul.allow_tf32 = False
    result = {"device": torch.cuda.get_device_name(), "torch": torch.__version__, "date": time.strftime("%Y-%m-%d"),
              "cases": []}
    for name, h, heads, ffn, b, s, fused in CASES:
        t0 = time.time()
        try:
            r = time_case(h, heads, ffn, b, s, fused)
        except Exception as e:  # recorded, the other cases go on
            r = {"error": repr(e)}
        r.update({"name": name, "hidden": h, "heads": heads, "ffn": ffn, "micro_batch": b, "seq": s, "fused": fused})
        result["cases"].append(r)
        torch.cuda.empty_cache()
        print(f"{name}: forward {r.get('forward_s', 0) * 1e3:.3f} ms, backward {r.get('backward_s', 0) * 1e3:.3f} ms "
              f"({time.time() - t0:.1f} s)", file=sys.stderr, flush=True)
        with open(sys.argv[1], "w") as f:
            json.dump(result, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
