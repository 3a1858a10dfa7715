// LLL on the GPU: CR-AS-LLL batched (one thread block per basis) for 8..64, per-basis time;
// the CPU+GPU block method for 128..1024, single-basis latency. float32, delta 0.75, no T from
// the caller. The plan's default checks float32 outputs against the input lattice
// (LllConfig::lattice_check), which on the GPU tracks T internally: the kernel is timed with and
// without T, plan.run with and without the check; block-method rows name theirs.
// Inputs from bench/lattice/lll_inputs.hpp (i.i.d. Gaussian and block-Toeplitz).
// Timing: GpuTimer (CUDA events) around the kernel launch for the batched case (the input is
// restored by a device copy outside the timed region), wall clock around LllPlan::run for the
// block method (it runs on CPU threads and the GPU); warm-up, median of repeats.
// Every output is verified (lattice/quality.hpp); the mean orthogonality defect is printed, and
// for the batched sizes and one block row also without the presort (LllConfig::presort).
// Usage: gpubench_lll_lattice [out.jsonl]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "lattice/lll_inputs.hpp"
#include "lattice/lll_internal.hpp"
#include "lattice/lll_math.hpp"
#include "mimorx/core/backend.hpp"
#include "mimorx/core/buffer.hpp"
#include "mimorx/lattice/lll.hpp"
#include "mimorx/lattice/quality.hpp"

using namespace mimorx;
using namespace mimorx::lattice;

namespace {

[[maybe_unused]] double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Verdict {
  int reduced = 0, checked = 0;
  double mean_defect = 0, geo_defect = 0;  // arithmetic and geometric means
};

[[maybe_unused]] Verdict verify(const std::vector<float>& out, int n, int count, int sample) {
  Verdict v;
  CheckOptions co;
  co.delta = 0.75;
  co.eps_mu = 0.01;
  co.eps_delta = 1e-3;
  co.condition_number = false;
  const int step = std::max(1, count / sample);
  for (int k = 0; k < count; k += step) {
    const auto q = check_lll(n, n, out.data() + std::size_t(k) * n * n, co);
    v.reduced += q.reduced();
    v.mean_defect += q.orthogonality_defect;
    v.geo_defect += std::log(q.orthogonality_defect);
    ++v.checked;
  }
  v.mean_defect /= std::max(1, v.checked);
  v.geo_defect = std::exp(v.geo_defect / std::max(1, v.checked));
  return v;
}

}  // namespace

int main(int argc, char** argv) {
#if MIMORX_HAS_CUDA
  if (!cuda_available()) {
    std::printf("gpubench_lll: no CUDA GPU available; nothing to measure\n");
    return 0;
  }
  std::ofstream json;
  if (argc > 1) json.open(argv[1], std::ios::app);
  const auto dev = cuda_devices().at(0);
  std::printf("device: %s\n\n", dev.name.c_str());
  std::printf(
      "| kind | n | batch | method | us/basis (kernel) | us/basis (kernel, input order) | "
      "us/basis (generic kernel) | us/basis (kernel with T) | us/basis (check kernels: B T, "
      "rebuild, re-check) | us/basis (plan.run, lattice check, default) | us/basis (plan.run, no "
      "check) | reduced | mean orth. defect | geo. mean orth. defect | geo. mean, input order |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (const std::string kind : {"gaussian", "toeplitz"}) {
    for (int n : {8, 16, 32, 64}) {
      // Large batches: several waves of resident blocks (a 64x64 basis is one 256-thread block,
      // about 5 per SM, so 1024 bases were 1.6 waves).
      const int count = n == 8 ? 65536 : n == 16 ? 16384 : n == 32 ? 16384 : 8192;
      const auto in = bench::lll_input(kind, n, count);
      std::vector<float> hf(in.begin(), in.end());
      const std::size_t total = hf.size();
      auto src = Buffer<float>::device(total);
      auto work = Buffer<float>::device(total);
      auto status = Buffer<std::int32_t>::device(count);
      src.copy_from_host(hf.data(), total);
      Stream s = Stream::create();
      GpuTimer timer(s);
      // The fixed-shape kernel (default for square 4..64) with presort (the default), without
      // it (input order), the generic kernel with presort, and the fixed-shape kernel tracking T
      // (what the plan's lattice check runs), interleaved.
      std::vector<double> ms[4], check_ms;
      std::vector<float> kept(total);
      auto tbuf = Buffer<std::int64_t>::device(std::size_t(count) * n * n);
      for (int rep = 0; rep < 6; ++rep) {
        for (int variant : {0, 1, 2, 3}) {
          lattice::detail::set_all_swap_generic_only(variant == 2);
          work.copy_from(src, s);
          timer.start();
          lattice::detail::all_swap_cuda<float>(
              work.data(), variant == 3 ? tbuf.data() : nullptr, status.data(), count, n, n,
              std::int64_t(n) * n, variant == 3 ? std::int64_t(n) * n : 0, 0.75,
              lattice::detail::default_max_iter(n), s.handle(), 0, variant != 1);
          timer.stop();
          if (rep > 0) ms[variant].push_back(timer.elapsed_ms());
          if (variant == 3) {
            // The lattice check's two kernels after the kernel with T: B T against B', the
            // rebuild where it drifted and the float64 re-check (src holds the inputs packed).
            timer.start();
            lattice::detail::rebuild_from_transform_cuda(
                src.data(), work.data(), tbuf.data(), status.data(), count, n, n,
                std::int64_t(n) * n, std::int64_t(n) * n, 0.75, s.handle(), 0);
            timer.stop();
            if (rep > 0) check_ms.push_back(timer.elapsed_ms());
          }
          if (rep == 0 && variant == 1) {
            s.synchronize();  // the copy below does not wait for the kernel on stream s
            work.copy_to_host(kept.data(), total);
          }
        }
      }
      lattice::detail::set_all_swap_generic_only(false);
      const double kernel_us = median(ms[0]) * 1000.0 / count;
      const double kept_us = median(ms[1]) * 1000.0 / count;
      const double generic_us = median(ms[2]) * 1000.0 / count;
      const double with_t_us = median(ms[3]) * 1000.0 / count;
      const double check_us = median(check_ms) * 1000.0 / count;
      tbuf = Buffer<std::int64_t>();
      const auto v_kept = verify(kept, n, count, 256);
      // Through the plan (validation, status copy-back) with wall clock: without the lattice
      // check, then with it (the default; its output is the one verified below).
      std::vector<LllStatus> st(count);
      auto plan_wall_us = [&](bool check) {
        LllConfig cfg{n, n};
        cfg.method = LllMethod::all_swap;
        cfg.lattice_check = check;
        LllPlan plan(cfg, Backend::cuda());
        std::vector<double> wall;
        for (int rep = 0; rep < 4; ++rep) {
          work.copy_from(src, s);
          s.synchronize();
          const auto t0 = std::chrono::steady_clock::now();
          plan.run(MatrixBatch<float>::over(work, count, n, n), {},
                   View<LllStatus>(st.data(), count, Memory::host), s);
          const auto t1 = std::chrono::steady_clock::now();
          if (rep > 0) wall.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
        }
        return median(wall) / count;
      };
      const double plan_nocheck_us = plan_wall_us(false);
      const double plan_us = plan_wall_us(true);
      std::vector<float> out(total);
      work.copy_to_host(out.data(), total);
      const int ok_status = int(std::count(st.begin(), st.end(), LllStatus::reduced));
      const int n_singular = int(std::count(st.begin(), st.end(), LllStatus::singular));
      const int n_precision = int(std::count(st.begin(), st.end(), LllStatus::precision_loss));
      const int n_notconv = int(std::count(st.begin(), st.end(), LllStatus::not_converged));
      if (ok_status != count)
        std::printf(
            "  (%s n=%d: %d singular, %d precision loss, %d not converged: flagged, "
            "not returned as reduced)\n",
            kind.c_str(), n, n_singular, n_precision, n_notconv);
      const auto v = verify(out, n, count, 256);
      std::printf(
          "| %s | %d | %d | all-swap | %.4f | %.4f | %.4f | %.4f | %.4f | %.4f | %.4f | %d/%d "
          "(status %d/%d) | %.4g | %.4g | %.4g |\n",
          kind.c_str(), n, count, kernel_us, kept_us, generic_us, with_t_us, check_us, plan_us,
          plan_nocheck_us, v.reduced, v.checked, ok_status, count, v.mean_defect, v.geo_defect,
          v_kept.geo_defect);
      std::fflush(stdout);
      if (json.is_open()) {
        nlohmann::json j = {{"bench", "lll"},
                            {"device", dev.name},
                            {"kind", kind},
                            {"n", n},
                            {"batch", count},
                            {"method", "all-swap"},
                            {"precision", "float32"},
                            {"delta", 0.75},
                            {"us_per_basis_kernel", kernel_us},
                            {"us_per_basis_kernel_input_order", kept_us},
                            {"us_per_basis_generic_kernel", generic_us},
                            {"us_per_basis_kernel_with_t", with_t_us},
                            {"us_per_basis_check_kernels", check_us},
                            {"us_per_basis_plan", plan_us},
                            {"us_per_basis_plan_no_lattice_check", plan_nocheck_us},
                            {"verified_reduced", v.reduced},
                            {"verified", v.checked},
                            {"status_reduced", ok_status},
                            {"status_singular", n_singular},
                            {"status_precision_loss", n_precision},
                            {"status_not_converged", n_notconv},
                            {"mean_orthogonality_defect", v.mean_defect},
                            {"geomean_orthogonality_defect", v.geo_defect},
                            {"geomean_orthogonality_defect_input_order", v_kept.geo_defect}};
        json << j.dump() << "\n";
      }
    }
  }
  // The kernel's shape: how often the full size reduction runs (every F swap phases), lanes per
  // vector (0 = automatic) and one group per column pair or per column: time, phases per basis
  // and quality, Gaussian bases, only with MIMORX_LLL_SWEEP=1.
  if (std::getenv("MIMORX_LLL_SWEEP")) {
    std::printf(
        "\n| n | batch | full reduction every | lanes | groups | us/basis (kernel) | phases/basis "
        "| status reduced | verified | mean orth. defect "
        "|\n|---|---|---|---|---|---|---|---|---|---|\n");
    for (int n : {8, 16, 32, 64}) {
      // Large batches: several waves of resident blocks (a 64x64 basis is one 256-thread block,
      // about 5 per SM, so 1024 bases were 1.6 waves).
      const int count = n == 8 ? 65536 : n == 16 ? 16384 : n == 32 ? 16384 : 8192;
      const auto in = bench::lll_input("gaussian", n, count);
      std::vector<float> hf(in.begin(), in.end());
      auto src = Buffer<float>::device(hf.size());
      auto work = Buffer<float>::device(hf.size());
      auto status = Buffer<std::int32_t>::device(count);
      src.copy_from_host(hf.data(), hf.size());
      Stream s = Stream::create();
      GpuTimer timer(s);
      struct Shape {
        int fe, lanes;
        bool per_column;
      };
      std::vector<Shape> shapes;
      for (int fe : {2, 8, 32, 1000000}) shapes.push_back({fe, 0, false});
      for (int lanes : {4, 8, 16, 32}) {
        for (bool pc : {false, true}) shapes.push_back({32, lanes, pc});
      }
      for (const Shape& sh : shapes) {
        const int fe = sh.fe;
        lattice::detail::set_all_swap_full_every(fe);
        lattice::detail::set_all_swap_shape(sh.lanes, sh.per_column);
        std::vector<double> ms;
        std::uint64_t phases = 0;
        for (int rep = 0; rep < 4; ++rep) {
          work.copy_from(src, s);
          s.synchronize();
          lattice::detail::all_swap_phase_total(true);
          timer.start();
          lattice::detail::all_swap_cuda<float>(
              work.data(), nullptr, status.data(), count, n, n, std::int64_t(n) * n, 0, 0.75,
              lattice::detail::default_max_iter(n), s.handle(), 0);
          timer.stop();
          if (rep > 0) ms.push_back(timer.elapsed_ms());
          phases = lattice::detail::all_swap_phase_total(true);
        }
        std::vector<std::int32_t> st(count);
        status.copy_to_host(st.data(), count);
        const int ok = int(std::count(st.begin(), st.end(), std::int32_t(LllStatus::reduced)));
        std::vector<float> out(hf.size());
        work.copy_to_host(out.data(), out.size());
        const auto v = verify(out, n, count, 256);
        const double us = median(ms) * 1000.0 / count;
        std::printf("| %d | %d | %d | %s | %s | %.4f | %.1f | %d/%d | %d/%d | %.4g |\n", n, count,
                    fe, sh.lanes ? std::to_string(sh.lanes).c_str() : "auto",
                    sh.per_column ? "per column" : "per pair", us, double(phases) / count, ok,
                    count, v.reduced, v.checked, v.mean_defect);
        std::fflush(stdout);
        if (json.is_open()) {
          json << nlohmann::json{{"bench", "lll_full_every"},
                                 {"lanes", sh.lanes},
                                 {"group_per_column", sh.per_column},
                                 {"device", dev.name},
                                 {"n", n},
                                 {"batch", count},
                                 {"full_every", fe},
                                 {"us_per_basis_kernel", us},
                                 {"phases_per_basis", double(phases) / count},
                                 {"status_reduced", ok},
                                 {"verified_reduced", v.reduced},
                                 {"verified", v.checked},
                                 {"mean_orthogonality_defect", v.mean_defect}}
                      .dump()
               << "\n";
        }
      }
      lattice::detail::set_all_swap_full_every(lattice::detail::kFullReductionEvery);
      lattice::detail::set_all_swap_shape(0, false);
    }
  }
  // Large single bases: the block method (all-swap does not fit shared memory), resident on the
  // GPU (default) and the host-side CPU+GPU scheduler (GSC-Update on the CPU): one untimed
  // warm-up run (the plan's first run allocates its workspaces: 2-5 ms at 1024), then the median
  // of 5 (a median of 3 with the warm-up in it moved by +-0.05 ms from one device-check to the
  // next).
  double last_s = 0;
  for (int n : {128, 256, 512, 1024}) {
    if (last_s > 2) break;  // the next size would not fit the benchmark's time budget
    struct Variant {
      bool resident;
      int block;               // 0: automatic
      bool transform = false;  // the caller's T
      bool check = true;       // LllConfig::lattice_check (without the caller's T: T internal)
      bool presort = true;     // false: the input order
    };
    // Default (checked), unchecked (the kernel's own speed, the figure the targets are stated
    // for), unchecked in input order, unchecked with l = 64 and 16, the host-side path
    // (checked), the caller's T with and without the check.
    for (const Variant var :
         {Variant{true, 0}, Variant{true, 0, false, false}, Variant{true, 0, false, false, false},
          Variant{true, 64, false, false}, Variant{true, 16, false, false}, Variant{false, 0},
          Variant{true, 0, true}, Variant{true, 0, true, false}}) {
      const bool resident = var.resident;
      const std::string kind = "gaussian";
      const auto in = bench::lll_input(kind, n, 1);
      std::vector<float> hf(in.begin(), in.end());
      auto work = Buffer<float>::device(hf.size());
      LllConfig cfg{n, n};
      cfg.method = LllMethod::block;
      cfg.block = var.block;
      cfg.transform = var.transform;
      cfg.presort = var.presort;
      cfg.lattice_check = var.check;
      LllPlan plan(cfg, Backend::cuda());
      auto t_work = Buffer<std::int64_t>::device(var.transform ? std::size_t(n) * n : 0);
      lattice::detail::set_block_device_enabled(resident);
      std::vector<double> wall;
      LllStatus st = LllStatus::not_converged;
      for (int rep = 0; rep < 6; ++rep) {
        work.copy_from_host(hf.data(), hf.size());
        const auto t0 = std::chrono::steady_clock::now();
        plan.run(MatrixBatch<float>::over(work, 1, n, n),
                 var.transform ? MatrixBatch<std::int64_t>::over(t_work, 1, n, n)
                               : MatrixBatch<std::int64_t>{},
                 View<LllStatus>(&st, 1, Memory::host));
        const auto t1 = std::chrono::steady_clock::now();
        if (rep > 0) wall.push_back(std::chrono::duration<double, std::milli>(t1 - t0).count());
      }
      lattice::detail::set_block_device_enabled(true);
      const double lat = median(wall);
      last_s = std::max(last_s, lat / 1000);
      std::vector<float> out(hf.size());
      work.copy_to_host(out.data(), out.size());
      const auto v = verify(out, n, 1, 1);
      const std::string path = std::string(resident ? "GPU-resident" : "CPU+GPU") +
                               (var.transform ? ", caller's T" : "") +
                               (var.check ? ", lattice check" : ", no check") +
                               (var.presort ? "" : ", input order");
      std::printf(
          "| %s | %d | 1 | block l=%d (%s) | %.2f (ms, wall; %.2f-%.2f) | - | %d/1 (status %s) | "
          "%.4g |\n",
          kind.c_str(), n, plan.block(), path.c_str(), lat,
          *std::min_element(wall.begin(), wall.end()), *std::max_element(wall.begin(), wall.end()),
          v.reduced, to_string(st), v.mean_defect);
      std::fflush(stdout);
      if (json.is_open()) {
        nlohmann::json j = {{"bench", "lll"},
                            {"device", dev.name},
                            {"kind", kind},
                            {"n", n},
                            {"batch", 1},
                            {"method", resident ? "block-gpu-resident" : "block-cpu+gpu"},
                            {"block", plan.block()},
                            {"transform", var.transform},
                            {"lattice_check", var.check},
                            {"presort", var.presort},
                            {"precision", "float32"},
                            {"delta", 0.75},
                            {"ms_wall", lat},
                            {"verified_reduced", v.reduced},
                            {"mean_orthogonality_defect", v.mean_defect}};
        json << j.dump() << "\n";
      }
    }
  }
  return 0;
#else
  (void)argc;
  (void)argv;
  std::printf("gpubench_lll: built without CUDA; nothing to measure\n");
  return 0;
#endif
}
