#!/usr/bin/env python3
"""Per-call cost of mimorx's Python blocks on a CUDA device, layer by layer: the extension's plan
call alone (outputs preallocated), the mimorx module's call (mimorx.ldpc / detect / modem), and
the Sionna-compatible block (mimorx.sionna), for one codeword and for a batch, on the link of
examples/python/sionna_link.py (4x4 16-QAM, LDPC k=3824 n=7648, LMMSE max-log, 10 iterations).

    python3 bench/python/call_overhead.py [--batch 1024] [--reps 200] [--jsonl out.jsonl]

"cpu" is the time per call until the call returns (calls queued back to back, no
synchronisation), "wall" the time per call including the device's work (synchronised at the
end): for one codeword "cpu" is the Python and launch overhead. A torch addition of two small
tensors is printed as the unit of one framework operation.
"""

import argparse
import json
import math
import time

import torch

import mimorx.sionna as mx
from mimorx import modem

K, N, NT, NR, M = 3824, 7648, 4, 4, 4
VECS = N // (NT * M)


def per_call(fn, reps):
    fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    t1 = time.perf_counter()
    torch.cuda.synchronize()
    t2 = time.perf_counter()
    return (t1 - t0) / reps, (t2 - t0) / reps


def calls(batch, dev):
    enc = mx.LDPC5GEncoder(K, N, num_bits_per_symbol=M)
    dec = mx.LDPC5GDecoder(enc, num_iter=10)
    det = mx.LinearDetector("lmmse", "bit", "maxlog", "qam", M)
    mapper, smapper = modem.Mapper("16qam"), mx.Mapper("qam", M)
    u = torch.randint(0, 2, (batch, K), device=dev).float()
    c = enc(u)
    x = smapper(c).reshape(batch, VECS, NT, 1)
    h = torch.view_as_complex(torch.randn(batch, VECS, NR, NT, 2, device=dev)) / math.sqrt(2)
    n0 = 0.1
    y = (h @ x).squeeze(-1)
    y = y + math.sqrt(n0 / 2) * torch.view_as_complex(torch.randn(*y.shape, 2, device=dev))
    s = (n0 * torch.eye(NR, dtype=torch.complex64, device=dev)).expand(batch, VECS, NR, NR)
    llr = det(y, h, s).reshape(batch, N)
    st = torch.cuda.current_stream().cuda_stream
    # The plans' inputs in their own layouts, built once.
    info = torch.zeros((batch, enc.k_ldpc), dtype=torch.uint8, device=dev)
    info[:, :K] = u.to(torch.uint8)
    cw = torch.empty((batch, enc.n_ldpc), dtype=torch.uint8, device=dev)
    raw_enc = enc._encoder._plans.for_array(info, "info")[0]
    mother = torch.zeros((batch, dec._n_mother), dtype=torch.float32, device=dev)
    mother.index_add_(1, torch.as_tensor(enc.gather(0), device=dev), -llr)
    out_k = torch.empty((batch, dec._decoder.k), dtype=torch.uint8, device=dev)
    raw_dec = dec._decoder._plans.for_array(mother, "llrs")[0]
    hv = h.reshape(-1, NR, NT).transpose(1, 2).contiguous().transpose(1, 2)
    yv = y.reshape(-1, NR).contiguous()
    n0v = torch.full((1,), n0, device=dev)
    dplan = det._plan(NT, NR)
    raw_det = dplan._plans.for_array(yv, "y")[0]
    ll = torch.empty((yv.shape[0], NT, M), device=dev)
    bb = torch.empty((yv.shape[0], NT, M), dtype=torch.uint8, device=dev)
    c8 = c.to(torch.uint8).reshape(-1)
    sym = torch.empty((c8.shape[0] // M,), dtype=torch.complex64, device=dev)
    raw_map = mapper._plans.for_array(c8, "bits")[0]
    a = torch.ones(4, device=dev)
    return {
        "encoder": {"plan": lambda: raw_enc.encode(info, cw, st),
                    "module": lambda: enc._encoder(info),
                    "block": lambda: enc(u)},
        "mapper": {"plan": lambda: raw_map.run(c8, sym, st),
                   "module": lambda: mapper(c8),
                   "block": lambda: smapper(c)},
        "detector": {"plan": lambda: raw_det.run(hv, yv, n0v, bb, ll, st),
                     "module": lambda: dplan(hv, yv, n0v),
                     "block": lambda: det(y, h, s)},
        "decoder": {"plan": lambda: raw_dec.decode(mother, out_k, None, None, False, st),
                    "module": lambda: dec._decoder(mother),
                    "block": lambda: dec(llr)},
        "torch add": {"block": lambda: a + a},
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batch", type=int, default=1024)
    ap.add_argument("--reps", type=int, default=200)
    ap.add_argument("--jsonl")
    a = ap.parse_args()
    record = {"bench": "python_call_overhead", "torch": torch.__version__,
              "device": torch.cuda.get_device_name(), "us": {}}
    for batch in (1, a.batch):
        print(f"batch {batch} codeword(s): time per call, cpu / wall in us")
        for blk, layers in calls(batch, "cuda").items():
            cells = []
            for layer, fn in layers.items():
                cpu, wall = per_call(fn, a.reps)
                record["us"][f"{blk}/{layer}/{batch}"] = [cpu * 1e6, wall * 1e6]
                cells.append(f"{layer} {cpu * 1e6:7.1f} / {wall * 1e6:7.1f}")
            print(f"  {blk:10s} " + "   ".join(cells))
    if a.jsonl:
        with open(a.jsonl, "a") as f:
            f.write(json.dumps(record) + "\n")


if __name__ == "__main__":
    main()
