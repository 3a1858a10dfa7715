// PSD parameters: validation of explicit PsdLevels, the automatic choice, the derived schedule.
#include <algorithm>
#include <string>

#include "detect/sphere_internal.hpp"
#include "mimorx/core/error.hpp"

namespace mimorx::detect {

namespace {
std::string at(const char* name, std::size_t i) {
  return std::string("levels.") + name + "[" + std::to_string(i) + "]";
}
int log2_exact(int q) {
  int l = 0;
  while ((1 << l) < q) ++l;
  return l;
}
std::size_t align16(std::size_t b) { return (b + 15) / 16 * 16; }
}  // namespace

namespace sphere {
PsdSchedule make_schedule(const PsdLevels& p, int n, int q) {
  PsdSchedule s;
  s.n = n;
  s.q = q;
  s.log2q = log2_exact(q);
  s.nlev = int(p.lvl.size());
  int prev_lvl = n + 1;
  std::int64_t prev_paths = 1;
  for (int x = 0; x < s.nlev; ++x) {
    s.lvl[x] = p.lvl[x];
    s.paths[x] = p.paths[x];
    const int d = prev_lvl - p.lvl[x];
    std::int64_t qd = 1, sum = 0;
    for (int i = 0; i < d; ++i) {
      qd *= q;
      sum += qd;
    }
    s.children_per_parent[x] = qd;
    s.nodes_per_parent[x] = sum;
    s.exp[x] = int(prev_paths * qd);
    s.tgt_floats = std::max(s.tgt_floats, int(prev_paths) * d);
    if (x + 1 < s.nlev) {
      while (s.capacity < s.exp[x]) s.capacity *= 2;
      s.buf_off[x] = s.buf_bytes;
      s.buf_bytes += int(align16(12 * std::size_t(s.exp[x])));
    }
    prev_lvl = p.lvl[x];
    prev_paths = p.paths[x];
  }
  return s;
}

int psd_team_width(const PsdSchedule& s, int override_width) {
  // Automatic: 8 lanes (4 vectors per warp) up to 16-QAM, a full warp from 64-QAM with n >= 8:
  // the fastest widths of a sweep over 8, 16, 32 at 4x4 QPSK, 16-QAM and 64-QAM (docs/psd.md).
  int team = override_width;
  if (team == 1) return 1;
  if (team == 0) team = s.q >= 8 && s.n >= 8 ? 32 : 8;
  if (s.capacity > 64) team = 32;
  return team;
}

int psd_auto_lanes(const MimoShape& shape, bool explicit_levels) {
  // One lane per vector except for 64-QAM and up with nt >= 4, where the team kernel's parallel
  // expansions win at 0-20 dB (4x4 64-QAM 20 dB: about half the lane kernel's time); the lane
  // kernel wins only at 30 dB, and the plan does not know the SNR (docs/psd.md).
  if (explicit_levels) return 0;
  const int n = real_dim(shape.mod, shape.nt), q = axis_levels(shape.mod);
  return q >= 8 && n >= 8 ? 0 : 1;
}

}  // namespace sphere

std::size_t psd_team_shared_bytes(const PsdLevels& p, int n, int q) {
  // Mirrors the kernel's layout (sphere_cuda.cu): R, z, the inverse permutation, the parents'
  // targets of one expansion, and one (uint64 vector, float metric) entry per expanded node of
  // every non-leaf level (the sort itself runs in registers).
  const sphere::PsdSchedule s = sphere::make_schedule(p, n, q);
  std::size_t b = align16(4 * std::size_t(n * n + n + n));
  b += align16(4 * std::size_t(s.tgt_floats));
  return b + std::size_t(s.buf_bytes);
}

void validate_psd_levels(const PsdLevels& p, int n, int q, std::size_t shared_limit_bytes) {
  const std::size_t nl = p.lvl.size();
  require(
      nl >= 1 && nl <= std::size_t(sphere::kMaxLevels), "levels.lvl",
      "has " + std::to_string(nl) + " entries; allowed 1.." + std::to_string(sphere::kMaxLevels));
  require(p.paths.size() == nl, "levels.paths",
          "has " + std::to_string(p.paths.size()) + " entries; give one per entry of lvl (" +
              std::to_string(nl) + ")");
  for (std::size_t i = 0; i < nl; ++i) {
    require(p.lvl[i] >= 1 && p.lvl[i] <= n, at("lvl", i),
            std::to_string(p.lvl[i]) + "; tree levels run from " + std::to_string(n) +
                " (first detected) down to 1 (leaves)");
    if (i > 0) {
      require(p.lvl[i] < p.lvl[i - 1], at("lvl", i),
              std::to_string(p.lvl[i]) + " is not below " + at("lvl", i - 1) + " = " +
                  std::to_string(p.lvl[i - 1]) + "; levels must strictly decrease");
    }
    require(p.paths[i] >= 1, at("paths", i), std::to_string(p.paths[i]) + "; paths must be >= 1");
  }
  require(p.lvl.back() == 1, at("lvl", nl - 1),
          std::to_string(p.lvl.back()) + "; the last expansion level must be 1 (leaves)");
  // exp_x = paths_{x-1} Q^(lvl_{x-1} - lvl_x), computed in double so that no value overflows.
  double prev_paths = 1;
  int prev_lvl = n + 1;
  for (std::size_t i = 0; i < nl; ++i) {
    double e = prev_paths;
    for (int k = 0; k < prev_lvl - p.lvl[i]; ++k) e *= q;
    const bool leaf = i + 1 == nl;
    const double limit = leaf ? sphere::kMaxLeafBatch : sphere::kMaxBuffer;
    require(e <= limit, i == 0 ? at("lvl", 0) : at("paths", i - 1),
            "gives exp = " + std::to_string(std::int64_t(e)) + " expanded nodes at level " +
                std::to_string(p.lvl[i]) + "; at most " + std::to_string(std::int64_t(limit)) +
                (leaf ? " at the leaf level" : " in one sorted level buffer") +
                " (fewer paths or closer levels)");
    if (!leaf) {
      require(p.paths[i] <= e, at("paths", i),
              std::to_string(p.paths[i]) + " exceeds the " + std::to_string(std::int64_t(e)) +
                  " nodes expanded at level " + std::to_string(p.lvl[i]));
    }
    prev_paths = p.paths[i];
    prev_lvl = p.lvl[i];
  }
  const std::size_t bytes = psd_team_shared_bytes(p, n, q);
  require(bytes <= shared_limit_bytes, "levels",
          "need " + std::to_string(bytes) + " bytes of shared memory per vector; the device has " +
              std::to_string(shared_limit_bytes) + " per block (fewer paths or closer levels)");
}

PsdLevels choose_psd_levels(const MimoShape& shape, std::size_t shared_limit_bytes) {
  const int n = sphere::real_dim(shape.mod, shape.nt);
  const int q = axis_levels(shape.mod);
  // Jump d levels between expansions and carry `paths` parents into each: the fastest of a
  // sweep over levels and paths at 10 and 20 dB (docs/psd.md, "Parameters"): QPSK d = 2, paths
  // 2; 16-QAM with n >= 8 a first jump of 2, then one level at a time with paths 4 (7-11 %
  // faster than one level at a time from the root; d = 2 is 20-50 % slower); 64-QAM d = 1,
  // paths 4 (half the time of paths 2). 16-QAM below n = 8 keeps d = 2, paths 2.
  const bool qam16_wide = q == 4 && n >= 8;
  const int d = q == 2 || (q == 4 && n < 8) ? 2 : 1;
  int paths = qam16_wide || q == 8 ? 4 : 2;
  PsdLevels p;
  for (int l = n + 1 - (qam16_wide ? 2 : d); l > 1; l -= d) p.lvl.push_back(l);
  p.lvl.push_back(1);
  p.paths.assign(p.lvl.size(), paths);
  while (paths > 1 && psd_team_shared_bytes(p, n, q) > shared_limit_bytes) {
    paths /= 2;
    p.paths.assign(p.lvl.size(), paths);
  }
  return p;
}

}  // namespace mimorx::detect
