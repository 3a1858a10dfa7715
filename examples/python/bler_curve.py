#!/usr/bin/env python3
"""BER/BLER of 4x4 16-QAM with 5G LDPC (TBS 3824, rate 1/2) for two detectors, in a few lines:
mimorx.sim.run returns the document `mimorx sim --ldpc --json` writes."""

import sys

import mimorx

doc = mimorx.sim.run("4x4", "16qam", "mmse,kbest:16", "4:1:9", ldpc=True, tbs=3824, rate=0.5,
                     min_errors=50, max_blocks=int(sys.argv[1]) if len(sys.argv) > 1 else 500,
                     early_stop=True)
print(f"{'detector':>10} {'Es/N0':>6} {'BER':>10} {'BLER':>10} {'blocks':>7}")
for p in doc["points"]:
    print(f"{p['detector']:>10} {p['snr_db']:6.1f} {p['ber']:10.3e} {p['bler']:10.3e} {p['blocks']:7d}")

try:  # a plot where matplotlib is installed
    import matplotlib.pyplot as plt

    for d in doc["config"]["detectors"]:
        pts = [p for p in doc["points"] if p["detector"] == d and p["bler"] > 0]
        plt.semilogy([p["snr_db"] for p in pts], [p["bler"] for p in pts], "o-", label=d)
    plt.xlabel("Es/N0 [dB]"), plt.ylabel("BLER"), plt.grid(True, which="both"), plt.legend()
    plt.savefig("bler.png", dpi=120)
    print("wrote bler.png")
except ImportError:
    pass
