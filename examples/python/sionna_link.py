#!/usr/bin/env python3
"""A Sionna link, 4x4 16-QAM over i.i.d. Rayleigh fading, 5G LDPC k=3824 n=7648, LMMSE detection
with max-log LLRs, 10 decoder iterations: once with Sionna's blocks, once with mimorx.sionna's
(one import changed), timing each block and the whole link on the same GPU.

    python3 examples/python/sionna_link.py [--batch 1024] [--ebno 6] [--reps 20] [--device cuda]
                                           [--jsonl out.jsonl]

Needs torch, sionna (sionna-no-rt) and mimorx built with CUDA. Prints throughput in information
Mbit/s per block and per link, the Python-call overhead of each mimorx block (a call on a batch
of 1 codeword), and BER/BLER of both links (they must be alike); with --jsonl, appends one JSON
line of these figures (tools/bench_report.py tabulates it).
"""

import argparse
import json
import math
import time

import torch

import mimorx.sionna as mx

K, N, NT, NR, M = 3824, 7648, 4, 4, 4  # info bits, code bits, antennas, bits per symbol
VECS = N // (NT * M)                    # 4x4 vectors per codeword


def rayleigh(batch, device):
    g = torch.randn(batch, VECS, NR, NT, 2, device=device) / math.sqrt(2)
    return torch.view_as_complex(g)


def awgn(y, n0):
    n = torch.view_as_complex(torch.randn(*y.shape, 2, device=y.device)) * math.sqrt(n0 / 2)
    return y + n


def timed(fn, reps):
    torch.cuda.synchronize()
    t = time.perf_counter()
    for _ in range(reps):
        out = fn()
    torch.cuda.synchronize()
    return out, (time.perf_counter() - t) / reps


def make_links(device):
    from sionna.phy.fec.ldpc import LDPC5GDecoder, LDPC5GEncoder
    from sionna.phy.mapping import Mapper
    from sionna.phy.mimo import LinearDetector

    senc = LDPC5GEncoder(K, N, num_bits_per_symbol=M)
    sionna_blocks = {
        "encoder": senc,
        "mapper": Mapper("qam", M),
        "detector": LinearDetector("lmmse", "bit", "maxlog", "qam", M),
        "decoder": LDPC5GDecoder(senc, num_iter=10),
    }
    menc = mx.LDPC5GEncoder(K, N, num_bits_per_symbol=M)
    mimorx_blocks = {
        "encoder": menc,
        "mapper": mx.Mapper("qam", M),
        "detector": mx.LinearDetector("lmmse", "bit", "maxlog", "qam", M),
        "decoder": mx.LDPC5GDecoder(menc, num_iter=10),
    }
    return {"sionna": sionna_blocks, "mimorx": mimorx_blocks}


def run_link(b, batch, n0, device, reps):
    times = {}
    u = torch.randint(0, 2, (batch, K), device=device).float()
    c, times["encoder"] = timed(lambda: b["encoder"](u), reps)
    x, times["mapper"] = timed(lambda: b["mapper"](c), reps)
    h = rayleigh(batch, device)
    y = awgn((h @ x.reshape(batch, VECS, NT, 1)).squeeze(-1), n0)
    s = (n0 * torch.eye(NR, dtype=torch.complex64, device=device)).expand(batch, VECS, NR, NR)
    llr, times["detector"] = timed(lambda: b["detector"](y, h, s), reps)
    llr = llr.reshape(batch, N)
    u_hat, times["decoder"] = timed(lambda: b["decoder"](llr), reps)

    def link():
        cw = b["encoder"](u)
        xx = b["mapper"](cw).reshape(batch, VECS, NT, 1)
        yy = awgn((h @ xx).squeeze(-1), n0)
        return b["decoder"](b["detector"](yy, h, s).reshape(batch, N))

    u_hat, times["link"] = timed(link, reps)
    errors = (u_hat != u)
    return times, float(errors.float().mean()), float(errors.any(dim=1).float().mean())


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=1024, help="codewords per call")
    ap.add_argument("--ebno", type=float, default=6.0, help="Eb/N0 in dB")
    ap.add_argument("--reps", type=int, default=10)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--jsonl", help="append the figures as one JSON line to this file")
    a = ap.parse_args()
    esno = a.ebno + 10 * math.log10(M * K / N)
    n0 = 10 ** (-esno / 10)
    links = make_links(a.device)
    results = {}
    for name, blocks in links.items():
        run_link(blocks, 8, n0, a.device, 1)  # warm-up (kernels, caches, graph tables)
        results[name] = run_link(blocks, a.batch, n0, a.device, a.reps)
    info_bits = a.batch * K
    print(f"batch {a.batch} codewords, Eb/N0 {a.ebno} dB; information Mbit/s (time per call)")
    print(f"{'block':>10} {'sionna':>22} {'mimorx':>22} {'speed-up':>9}")
    for blk in ("encoder", "mapper", "detector", "decoder", "link"):
        ts, tm = results["sionna"][0][blk], results["mimorx"][0][blk]
        print(f"{blk:>10} {info_bits / ts / 1e6:10.1f} ({ts * 1e3:7.2f} ms) "
              f"{info_bits / tm / 1e6:10.1f} ({tm * 1e3:7.2f} ms) {ts / tm:8.1f}x")
    for name, (_, ber, bler) in results.items():
        print(f"{name}: BER {ber:.3e} BLER {bler:.3e}")
    # Python-call overhead: one codeword per call, where the GPU work is negligible.
    small = run_link(links["mimorx"], 1, n0, a.device, 50)[0]
    print("mimorx time per call with 1 codeword (overhead bound): " +
          ", ".join(f"{k} {v * 1e6:.0f} us" for k, v in small.items()))
    share = small["link"] / results["mimorx"][0]["link"]
    print(f"overhead bound / link time per call at {a.batch} codewords: {share:.2f}")
    if a.jsonl:
        record = {"bench": "python_sionna_link", "batch": a.batch, "ebno_db": a.ebno,
                  "k": K, "n": N, "mod": "16qam", "nt": NT, "nr": NR,
                  "torch": torch.__version__,
                  "sionna_s": results["sionna"][0], "mimorx_s": results["mimorx"][0],
                  "mimorx_one_codeword_s": small, "overhead_share": share,
                  "sionna_ber": results["sionna"][1], "mimorx_ber": results["mimorx"][1]}
        with open(a.jsonl, "a") as f:
            f.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    main()
