#!/usr/bin/env python3
"""The coded link of gpubench_link_sim written with Sionna 2.2's own blocks (the peer a user
would pick), timed on the same GPU: 4x4 i.i.d. Rayleigh (one channel per received vector),
16-QAM, LDPC k=3824 n=7648 (LDPC5GEncoder / LDPC5GDecoder, min-sum, 10 iterations), LMMSE
max-log detection (LinearDetector), 1024 blocks a call. Prints the information throughput and
appends one JSON line to the file given as the first argument.

Usage: sionna_link.py [out.jsonl] [--detector lmmse|kbest16] [--mod 16|64]
"""
import argparse
import json
import time

import torch
from sionna.phy.channel import FlatFadingChannel
from sionna.phy.fec.ldpc import LDPC5GDecoder, LDPC5GEncoder
from sionna.phy.mapping import BinarySource, Mapper
from sionna.phy.mimo import KBestDetector, LinearDetector


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out", nargs="?")
    ap.add_argument("--detector", default="lmmse")
    ap.add_argument("--mod", type=int, default=4, help="bits per symbol")
    ap.add_argument("--blocks", type=int, default=1024)
    ap.add_argument("--calls", type=int, default=5)
    a = ap.parse_args()
    dev = "cuda:0"
    nt = nr = 4
    k, n, m = 3824, 7648, a.mod
    n = (n + nt * m - 1) // (nt * m) * (nt * m)
    src = BinarySource(device=dev)
    enc = LDPC5GEncoder(k, n, num_bits_per_symbol=m, device=dev)
    dec = LDPC5GDecoder(enc, cn_update="minsum", num_iter=10, hard_out=True, device=dev)
    mapper = Mapper("qam", m, device=dev)
    chan = FlatFadingChannel(nt, nr, return_channel=True, device=dev)
    if a.detector == "lmmse":
        det = LinearDetector("lmmse", "bit", "maxlog", "qam", m, device=dev)
    else:
        det = KBestDetector("bit", nt, 16, "qam", m, device=dev)
    es_n0_db = 10.0
    no = torch.tensor(10 ** (-es_n0_db / 10), device=dev)
    s = no * torch.eye(nr, dtype=torch.complex64, device=dev)

    def step():
        b = src([a.blocks, k])
        c = enc(b)
        x = mapper(c).reshape(-1, nt)  # [blocks * n / (nt m), nt]
        y, h = chan(x, no)
        llr = det(y, h, s.expand(y.shape[0], nr, nr))  # Sionna: log p1/p0
        llr = llr.reshape(a.blocks, n)
        bhat = dec(llr)
        errors = (bhat != b).any(dim=1).sum()
        return errors

    step()
    torch.cuda.synchronize()
    times = []
    for _ in range(a.calls):
        t0 = time.perf_counter()
        e = step()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t0)
    t = sorted(times)[len(times) // 2]
    mbps = a.blocks * k / t / 1e6
    print(f"sionna {a.detector} 4x4 {2**m}-QAM k={k} n={n}: {a.blocks} blocks in {t*1e3:.1f} ms, "
          f"{mbps:.1f} Mbit/s (block errors in the last call: {int(e)})")
    if a.out:
        with open(a.out, "a") as f:
            f.write(json.dumps({"bench": "sionna_link", "detector": a.detector, "mod": 2**m,
                                "k": k, "n": n, "blocks": a.blocks, "seconds": t,
                                "info_mbps": mbps, "torch": torch.__version__}) + "\n")


if __name__ == "__main__":
    main()
