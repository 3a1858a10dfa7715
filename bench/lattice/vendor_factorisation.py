#!/usr/bin/env python3
"""The vendor libraries' time for the dense factorisations an LLL of one n x n basis needs.

Any LLL needs the Gram-Schmidt data (R of B = QR, or the Cholesky factor of B^T B) of the whole
basis at least once, and our block method needs it again for the final check. This times what
cuBLAS and cuSOLVER (through PyTorch, which the device machine has; the project does not link
them) take for those steps on one basis, as a floor for the 1024 x 1024 target of issue 6.

Usage (on a machine with a CUDA GPU and PyTorch): vendor_factorisation.py [out.jsonl]
Gaussian bases, CUDA events, 5 warm-ups, median of 20 runs per step.
"""
import json
import statistics
import sys

import torch


def time_ms(fn, reps=20):
    for _ in range(5):
        fn()
    times = []
    for _ in range(reps):
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        stop.record()
        stop.synchronize()
        times.append(start.elapsed_time(stop))
    return statistics.median(times)


def main():
    if not torch.cuda.is_available():
        print("vendor_factorisation: no CUDA GPU; nothing to measure")
        return
    out = open(sys.argv[1], "a") if len(sys.argv) > 1 else None
    device = torch.cuda.get_device_name(0)
    print(f"device: {device}, torch {torch.__version__}")
    print("| n | dtype | B^T B ms | Cholesky of B^T B ms | Gram + Cholesky ms | QR of B ms |")
    print("|---|---|---|---|---|---|")
    gen = torch.Generator(device="cuda").manual_seed(1)
    for n in (256, 512, 1024):
        for dtype in (torch.float32, torch.float64):
            b = torch.randn(n, n, device="cuda", dtype=dtype, generator=gen)
            g = b.T @ b
            gram = time_ms(lambda: b.T @ b)
            chol = time_ms(lambda: torch.linalg.cholesky_ex(g))
            both = time_ms(lambda: torch.linalg.cholesky_ex(b.T @ b))
            qr = time_ms(lambda: torch.linalg.qr(b, mode="r"))
            name = str(dtype).replace("torch.", "")
            print(f"| {n} | {name} | {gram:.3f} | {chol:.3f} | {both:.3f} | {qr:.3f} |")
            if out:
                out.write(json.dumps({"bench": "vendor_factorisation", "device": device, "n": n,
                                      "dtype": name, "gram_ms": gram, "cholesky_ms": chol,
                                      "gram_cholesky_ms": both, "qr_r_ms": qr}) + "\n")


if __name__ == "__main__":
    main()
