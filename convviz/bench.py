"""Benchmark of the public numeric API: `python -m convviz.bench [--repeats R] [--no-loop]`.

Prints median wall times (ms) of conv2d, conv2d_input, conv2d_weight and conv2d_bias, their total
(median, and best of the runs: the machine is shared), PyTorch's total when torch is installed, the
plain loop reference on one case, the peak extra memory of each call, the sweeps' build time, and
a 200-step training run (convviz.learning.training) on the recitation's stride-2 layer and the
classroom preset (and on qa-channels, as many steps as the app's work limit allows). By default the
engine runs as a library does (OpenBLAS's own threads); `--server` runs it as the app's server does
(BLAS pinned to one thread once, large work split over two threads; see convviz/engine/_threads.py).
The header says which. Figures for the issues' closing notes: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import tracemalloc

import numpy as np

from convviz import conv2d, conv2d_bias, conv2d_input, conv2d_weight
from convviz.engine import _threads, arrays, sweeps
from convviz.engine.reference import conv2d_loop
from convviz.engine.spec import ConvSpec
from convviz.learning import loss, sgd, training
from convviz.model.presets import PRESETS_BY_KEY
from convviz.model.state import MAX_MACS

# name, input shape (N, C_in, H, W), weight shape (C_out, C_in, kH, kW), layer arguments
CASES = [
    ("a", (1, 1, 5, 5), (1, 1, 3, 3), {"stride": 2}),
    ("b", (1, 5, 100, 100), (10, 5, 5, 5), {}),
    ("c", (8, 64, 56, 56), (64, 64, 3, 3), {"padding": 1}),
    ("d", (8, 64, 56, 56), (128, 64, 3, 3), {"stride": 2, "padding": 1}),
]
OPS = ("forward", "grad_x", "grad_w", "grad_b")


def times_ms(fn, repeats: int) -> list[float]:
    """Wall times of fn() in ms, after one warm-up call."""
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(1e3 * (time.perf_counter() - start))
    return times


def median_ms(fn, repeats: int) -> float:
    return statistics.median(times_ms(fn, repeats))


def operands(case, dtype, seed: int = 0):
    """x, w, grad_out of one case, standard normal in `dtype`."""
    _, x_shape, w_shape, kwargs = case
    rng = np.random.default_rng(seed)
    out_shape = ConvSpec.create(x_shape, w_shape, **kwargs).output_shape
    return tuple(rng.standard_normal(s).astype(dtype) for s in (x_shape, w_shape, out_shape))


def numpy_calls(x, w, g, kwargs) -> dict:
    """The four public calls of one layer, each a no-argument function."""
    return {
        "forward": lambda: conv2d(x, w, **kwargs),
        "grad_x": lambda: conv2d_input(x.shape, w, g, **kwargs),
        "grad_w": lambda: conv2d_weight(x, w.shape, g, **kwargs),
        "grad_b": lambda: conv2d_bias(g),
    }


def torch_total(x, w, g, kwargs, repeats: int) -> float | None:
    """PyTorch's time for the same four calls, or None when torch is not installed."""
    try:
        import torch
    except ImportError:
        return None
    tx, tw, tg = (torch.from_numpy(a) for a in (x, w, g))
    stride, padding = kwargs.get("stride", 1), kwargs.get("padding", 0)

    def run():
        torch.nn.functional.conv2d(tx, tw, stride=stride, padding=padding)
        torch.nn.grad.conv2d_input(tx.shape, tw, tg, stride=stride, padding=padding)
        torch.nn.grad.conv2d_weight(tx, tw.shape, tg, stride=stride, padding=padding)
        tg.sum(dim=(0, 2, 3))

    with torch.no_grad():
        return median_ms(run, repeats)


def speed_table(repeats: int) -> dict:
    """Print one row per case and dtype; return the float64 forward time of each case."""
    heads = (*OPS, "total", "best", "torch")
    print(f"{'case':<5}{'dtype':<8}" + "".join(f"{h:>9}" for h in heads))
    forward64 = {}
    for case in CASES:
        for dtype in (np.float32, np.float64):
            x, w, g = operands(case, dtype)
            calls = numpy_calls(x, w, g, case[3])
            times = [median_ms(calls[op], repeats) for op in OPS]
            totals = times_ms(lambda c=calls: [f() for f in c.values()], repeats)
            ref = torch_total(x, w, g, case[3], repeats)
            cells = [*times, statistics.median(totals), min(totals)] + (
                [] if ref is None else [ref]
            )
            print(f"{case[0]:<5}{np.dtype(dtype).name:<8}" + "".join(f"{t:9.3f}" for t in cells))
            if dtype is np.float64:
                forward64[case[0]] = times[0]
    return forward64


def loop_ratio(forward64: dict) -> None:
    """Time the plain-loop forward of case b once and compare it with the fast forward."""
    case = CASES[1]
    x, w, _ = operands(case, np.float64)
    start = time.perf_counter()
    conv2d_loop(x, w, **case[3])
    loop = 1e3 * (time.perf_counter() - start)
    print(
        f"\nloop reference, case b forward (float64, one run): {loop:.0f} ms, "
        f"{loop / forward64['b']:.0f}× the fast forward ({forward64['b']:.3f} ms)"
    )


def memory_table() -> None:
    """Peak memory each call allocates (tracemalloc), relative to max(input, output), case c."""
    print("\npeak extra memory / max(input, output), case c (result and padding included)")
    for dtype in (np.float32, np.float64):
        x, w, g = operands(CASES[2], dtype)
        calls = numpy_calls(x, w, g, CASES[2][3])
        ratios = []
        for op in OPS:
            calls[op]()  # warm-up: a thread pool's stacks (--server) are not the call's memory
            tracemalloc.start()
            calls[op]()
            peak = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
            ratios.append(peak / max(x.nbytes, g.nbytes))
        cells = "  ".join(f"{op} {r:.2f}×" for op, r in zip(OPS, ratios))
        print(f"  {np.dtype(dtype).name:<8}{cells}")


def sweep_timing(repeats: int) -> None:
    """Time building the layer's stages and every sweep for a 64×64 input and a 3×3 kernel."""
    spec = ConvSpec.create((1, 1, 64, 64), (1, 1, 3, 3), padding=1)
    rng = np.random.default_rng(0)
    x, w, g = (
        rng.standard_normal(s) for s in (spec.input_shape, spec.weight_shape, spec.output_shape)
    )
    lay = arrays.layer(spec, x, w, g)
    build = [
        lambda: sweeps.forward_sweep(lay.forward),
        lambda: sweeps.input_grad_sweep(lay.input_grad),
        lambda: sweeps.weight_grad_sweep(lay.weight_grad),
    ]
    stage_ms = median_ms(lambda: arrays.layer(spec, x, w, g), repeats)
    sweep_ms = median_ms(lambda: [b() for b in build], repeats)
    print(
        f"\nsweeps, 64×64 input, 3×3 kernel: stages {stage_ms:.2f} ms, "
        f"all three sweeps {sweep_ms:.2f} ms"
    )


TRAIN_PRESETS = ("recitation-s2", "classroom", "qa-channels")


def train_timing(repeats: int) -> None:
    """Time a training run (momentum 0.9) on three presets, 200 steps or as many as the app's
    work limit allows: the run's median, one step's share, the steps whose arrays it keeps, and
    its peak memory."""
    print(
        f"\ntraining runs (momentum 0.9, lr 0.4·critical where known, float64): 200 steps, or "
        f"as many as {MAX_MACS:,} multiply-adds allow"
    )
    for key in TRAIN_PRESETS:
        p = PRESETS_BY_KEY[key]
        spec, (x, w) = p.spec(), p.values()
        source = "sobel x" if spec.kernel_size == (3, 3) else "random"
        target = loss.make_target(spec, x, source).t
        curvature = sgd.curvature(spec, x)
        lr = 1e-8 if curvature is None else 0.4 * curvature.critical_lr(0.9)
        steps = training.max_steps(spec, MAX_MACS)

        def run(spec=spec, x=x, w=w, target=target, lr=lr, steps=steps):
            return training.train(spec, x, w, None, target, lr, steps, momentum=0.9)

        ms = median_ms(run, max(3, repeats // 10))
        tracemalloc.start()
        kept = len(run().kept)
        peak = tracemalloc.get_traced_memory()[1]
        tracemalloc.stop()
        print(
            f"  {key:<14} {steps:3d} steps {ms:9.2f} ms, {ms / (steps + 1):7.3f} ms per step, "
            f"{kept} of {steps + 1} steps kept, peak {peak / 2**20:.1f} MB ({source} target)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=30, help="timed runs per figure")
    parser.add_argument("--no-loop", action="store_true", help="skip the slow loop reference")
    parser.add_argument(
        "--server", action="store_true", help="one BLAS thread, two-thread split (as the app)"
    )
    args = parser.parse_args()
    if args.server:
        _threads.pin_blas_to_one_thread()
    threads = (
        "BLAS pinned to 1 thread, 2-thread split (the app's server)"
        if args.server
        else ("OpenBLAS's own threads, no split (a library user)")
    )
    blas = np.__config__.CONFIG["Build Dependencies"]["blas"]
    knobs = {k: os.environ[k] for k in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if k in os.environ}
    print(
        f"numpy {np.__version__}, BLAS {blas['name']} {blas['version']}, "
        f"{os.cpu_count()} cores, env {knobs or 'clean'}; {threads}; "
        f"median ms of {args.repeats} runs\n"
    )
    forward64 = speed_table(args.repeats)
    if not args.no_loop:
        loop_ratio(forward64)
    memory_table()
    sweep_timing(args.repeats)
    train_timing(args.repeats)


if __name__ == "__main__":
    main()
