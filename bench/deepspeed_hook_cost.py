#!/usr/bin/env python3
"""Host time of DeepSpeed 0.9.3's stage-3 hooks, measured on a CPU (no GPU needed).

DeepSpeed's stage-3 hooks (fetch, release, partition, the per-parameter gradient hooks) are Python
that runs on the host thread beside the GPU's kernels.  This times them directly: an OPT-shaped
module tree (Hugging Face's: per decoder layer the attention module with q/k/v/out projections,
two LayerNorms, the activation module, fc1, fc2) at a tiny width, so that its kernels cost next to
nothing, run alone and under ZeRO-3 (world size 1, gloo), at several depths; the slope of the
difference over the layer count is the hooks' host time per layer.  It is this CPU's, in
DeepSpeed's Python without CUDA's launch and event calls (the accelerator below makes streams and
events no-ops), so it is a floor for a GPU host of the same speed.

Needs Debian's python3-torch (1.13) and DeepSpeed 0.9.3's source tree (not installed: hjson and
the C++ utils op are replaced by stand-ins), e.g.:
    git -C DeepSpeed archive v0.9.3 deepspeed accelerator op_builder | tar -x -C /tmp/ds093
    /usr/bin/python3 bench/deepspeed_hook_cost.py --deepspeed-src /tmp/ds093 > hook_cost.json
Prints one JSON object (times in seconds); progress on stderr.
"""
import argparse
import contextlib
import json
import os
import statistics
import sys
import tempfile
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--deepspeed-src", required=True, help="DeepSpeed 0.9.3's source tree (deepspeed/, op_builder/)")
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--tokens", type=int, default=16)
    ap.add_argument("--layers", default="12,24,48", help="depths to fit the per-layer slope over")
    ap.add_argument("--reps", type=int, default=15)
    args = ap.parse_args()

    stubs = tempfile.mkdtemp()
    with open(os.path.join(stubs, "hjson.py"), "w") as f:  # Debian has no hjson; plain JSON is all it reads here
        f.write("from json import *  # noqa\n")
    sys.path[:0] = [args.deepspeed_src, stubs]
    for k, v in {"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": "29511", "RANK": "0", "WORLD_SIZE": "1", "LOCAL_RANK": "0"}.items():
        os.environ.setdefault(k, v)

    import torch
    from torch import nn
    with contextlib.redirect_stdout(sys.stderr):
        import deepspeed
        import deepspeed.ops.op_builder as op_builder
        from deepspeed.accelerator import set_accelerator
        from deepspeed.accelerator.abstract_accelerator import DeepSpeedAccelerator

    class Stream:
        def wait_stream(self, other): pass
        def wait_event(self, event): pass
        def synchronize(self): pass

    class Event:
        def __init__(self, **kwargs): pass
        def record(self, stream=None): pass
        def query(self): return True
        def synchronize(self): pass
        def wait(self, stream=None): pass

    class HostAccelerator(DeepSpeedAccelerator):
        """Tensors on the CPU; streams and events that do nothing; gloo."""
        def __init__(self):
            self._name, self._communication_backend_name = "cpu", "gloo"
        def is_synchronized_device(self): return True
        def device_name(self, device_index=None): return "cpu"
        def device(self, device_index=None): return torch.device("cpu")
        def set_device(self, device_index): pass
        def current_device(self): return 0
        def current_device_name(self): return "cpu"
        def device_count(self): return 1
        def synchronize(self, device_index=None): pass
        def random(self): return torch.random
        def set_rng_state(self, new_state, device_index=None): torch.set_rng_state(new_state)
        def get_rng_state(self, device_index=None): return torch.get_rng_state()
        def manual_seed(self, seed): torch.manual_seed(seed)
        def manual_seed_all(self, seed): torch.manual_seed(seed)
        def initial_seed(self, seed): return torch.initial_seed()
        def default_generator(self, device_index): return torch.default_generator
        @property
        def Stream(self): return Stream
        def stream(self, stream): return contextlib.nullcontext()
        def current_stream(self, device_index=None): return Stream()
        def default_stream(self, device_index=None): return Stream()
        @property
        def Event(self): return Event
        def empty_cache(self): pass
        def memory_allocated(self, device_index=None): return 0
        def max_memory_allocated(self, device_index=None): return 0
        def reset_max_memory_allocated(self, device_index=None): pass
        def memory_cached(self, device_index=None): return 0
        def max_memory_cached(self, device_index=None): return 0
        def reset_max_memory_cached(self, device_index=None): pass
        def memory_stats(self, device_index=None): return {"num_alloc_retries": 0}
        def reset_peak_memory_stats(self, device_index=None): pass
        def memory_reserved(self, device_index=None): return 0
        def max_memory_reserved(self, device_index=None): return 0
        def total_memory(self, device_index=None): return 1 << 40
        def is_bf16_supported(self): return True
        def is_fp16_supported(self): return False
        def amp(self): return None
        def is_available(self): return True
        def range_push(self, msg): pass
        def range_pop(self): pass
        def lazy_call(self, callback): return callback()
        def communication_backend_name(self): return "gloo"
        @property
        def BFloat16Tensor(self): return torch.BFloat16Tensor
        @property
        def ByteTensor(self): return torch.ByteTensor
        @property
        def DoubleTensor(self): return torch.DoubleTensor
        @property
        def FloatTensor(self): return torch.FloatTensor
        @property
        def HalfTensor(self): return torch.HalfTensor
        @property
        def IntTensor(self): return torch.IntTensor
        @property
        def LongTensor(self): return torch.LongTensor
        def pin_memory(self, tensor): return tensor
        def on_accelerator(self, tensor): return tensor.device.type == "cpu"
        def op_builder_dir(self): return "op_builder"
        def create_op_builder(self, class_name): return None
        def get_op_builder(self, class_name): return None
        def build_extension(self): return None

    with contextlib.redirect_stdout(sys.stderr):
        set_accelerator(HostAccelerator())

    class Utils:  # DeepSpeed's flatten/unflatten extension, as torch's own functions (no compiler)
        flatten = staticmethod(torch._utils._flatten_dense_tensors)
        unflatten = staticmethod(torch._utils._unflatten_dense_tensors)
    op_builder.UtilsBuilder.load = lambda self, verbose=True: Utils
    torch.Tensor.record_stream = lambda self, stream: None  # a CPU tensor has no stream to record

    class Done:
        def wait(self): pass

    def reduce_scatter_one_rank(output_tensor, input_tensor, group=None, async_op=False, **kwargs):
        output_tensor.copy_(input_tensor.view(-1)[:output_tensor.numel()].view_as(output_tensor))
        return Done()
    deepspeed.comm.reduce_scatter_fn = reduce_scatter_one_rank  # gloo has no reduce_scatter_tensor

    H, T = args.hidden, args.tokens

    class Attention(nn.Module):
        def __init__(s):
            super().__init__()
            s.q_proj, s.k_proj, s.v_proj, s.out_proj = (nn.Linear(H, H) for _ in range(4))
        def forward(s, x):
            a = torch.softmax(s.q_proj(x) @ s.k_proj(x).transpose(-1, -2), -1) @ s.v_proj(x)
            return s.out_proj(a)

    class Layer(nn.Module):
        def __init__(s):
            super().__init__()
            s.self_attn, s.self_attn_layer_norm = Attention(), nn.LayerNorm(H)
            s.activation_fn, s.fc1, s.fc2, s.final_layer_norm = nn.ReLU(), nn.Linear(H, 4 * H), nn.Linear(4 * H, H), nn.LayerNorm(H)
        def forward(s, x):
            x = x + s.self_attn(s.self_attn_layer_norm(x))
            return x + s.fc2(s.activation_fn(s.fc1(s.final_layer_norm(x))))

    class Model(nn.Module):
        def __init__(s, layers):
            super().__init__()
            s.layers = nn.ModuleList(Layer() for _ in range(layers))
        def forward(s, x):
            for layer in s.layers:
                x = layer(x)
            return x.pow(2).mean()

    def timed(fwd, bwd, step):
        for _ in range(3):
            bwd(fwd()); step()
        f, b, st = [], [], []
        for _ in range(args.reps):
            t0 = time.perf_counter(); loss = fwd(); t1 = time.perf_counter(); bwd(loss); t2 = time.perf_counter(); step()
            t3 = time.perf_counter()
            f.append(t1 - t0); b.append(t2 - t1); st.append(t3 - t2)
        return statistics.median(f), statistics.median(b), statistics.median(st)

    def plain(layers):
        m = Model(layers)
        opt = torch.optim.SGD(m.parameters(), lr=1e-3)
        return timed(lambda: m(torch.randn(1, T, H)), lambda loss: loss.backward(),
                     lambda: (opt.step(), opt.zero_grad()))

    def zero3(layers):
        m = Model(layers)
        cfg = {"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 3}, "steps_per_print": 10**9,
               "zero_allow_untested_optimizer": True}
        with contextlib.redirect_stdout(sys.stderr):
            engine, *_ = deepspeed.initialize(model=m, optimizer=torch.optim.SGD(m.parameters(), lr=1e-3), config=cfg)
        return timed(lambda: engine(torch.randn(1, T, H)), engine.backward, engine.step)

    torch.set_num_threads(1)
    torch.manual_seed(0)
    with contextlib.redirect_stdout(sys.stderr):
        deepspeed.init_distributed("gloo")
    depths = [int(x) for x in args.layers.split(",")]
    rows = []
    for n in depths:
        p, z = plain(n), zero3(n)
        rows.append({"layers": n, "plain_s": dict(zip(("forward", "backward", "step"), p)),
                     "zero3_s": dict(zip(("forward", "backward", "step"), z))})
        print(f"deepspeed_hook_cost: {n} layers: forward {p[0]*1e3:.2f} -> {z[0]*1e3:.2f} ms, "
              f"backward {p[1]*1e3:.2f} -> {z[1]*1e3:.2f} ms, step {p[2]*1e3:.2f} -> {z[2]*1e3:.2f} ms", file=sys.stderr)

    def slope(part):  # least squares of the ZeRO-3 excess over the layer count
        xs = [r["layers"] for r in rows]
        ys = [r["zero3_s"][part] - r["plain_s"][part] for r in rows]
        mx, my = statistics.mean(xs), statistics.mean(ys)
        return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sum((x - mx) ** 2 for x in xs)

    per_layer = {part: slope(part) for part in ("forward", "backward", "step")}
    modules_per_layer = sum(1 for _ in Layer().modules())
    params_per_layer = sum(1 for _ in Layer().parameters())
    import platform
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.processor())
    print(json.dumps({
        "what": "host time of DeepSpeed 0.9.3 stage-3 hooks per OPT decoder layer, ZeRO-3 minus the same model alone",
        "cpu": cpu, "torch": torch.__version__, "hidden": H, "tokens": T, "reps": args.reps,
        "modules_per_layer": modules_per_layer, "params_per_layer": params_per_layer,
        "per_layer_s": per_layer,
        "per_module_s": {k: v / modules_per_layer for k, v in per_layer.items()},
        "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
