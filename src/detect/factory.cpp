// Adapters from each detector plan to Detector (detect/factory.hpp). A detector whose header is
// absent from this source tree is simply not offered (the list is printed in the error message).
#include "mimorx/detect/factory.hpp"

#include <charconv>
#include <cmath>
#include <functional>
#include <map>

#include "mimorx/core/buffer.hpp"
#include "mimorx/core/error.hpp"

#if __has_include("mimorx/detect/linear.hpp")
#include "mimorx/detect/linear.hpp"
#define MIMORX_DETECT_HAS_LINEAR 1
#endif
#if __has_include("mimorx/detect/ml.hpp")
#include "mimorx/detect/ml.hpp"
#define MIMORX_DETECT_HAS_ML 1
#endif
#if __has_include("mimorx/detect/sphere.hpp")
#include "mimorx/detect/sphere.hpp"
#define MIMORX_DETECT_HAS_SPHERE 1
#endif
#if __has_include("mimorx/detect/sts.hpp")
#include "mimorx/detect/sts.hpp"
#define MIMORX_DETECT_HAS_STS 1
#endif
#if __has_include("mimorx/detect/nway.hpp")
#include "mimorx/detect/nway.hpp"
#define MIMORX_DETECT_HAS_NWAY 1
#endif
#if __has_include("mimorx/detect/kbest.hpp")
#include "mimorx/detect/kbest.hpp"
#define MIMORX_DETECT_HAS_KBEST 1
#endif
#if __has_include("mimorx/detect/trellis.hpp")
#include "mimorx/detect/trellis.hpp"
#define MIMORX_DETECT_HAS_TRELLIS 1
#endif
#if __has_include("mimorx/detect/lr_aided.hpp")
#include "mimorx/detect/lr_aided.hpp"
#define MIMORX_DETECT_HAS_LR 1
#endif

namespace mimorx::detect {

namespace {

// Wraps a plan whose run(in, bits, llrs) matches the Detector contract.
template <class Plan>
class SoftHardAdapter final : public Detector {
 public:
  SoftHardAdapter(std::string name, Plan plan, bool soft)
      : Detector(std::move(name)), plan_(std::move(plan)), soft_(soft) {}
  bool soft() const override { return soft_; }

 protected:
  void run_on(const DetectInput& in, View<std::uint8_t> bits, View<float> llrs,
              const Stream& stream) override {
    plan_.run(in, bits, llrs, stream);
  }

 private:
  Plan plan_;
  bool soft_;
};

// Hard-output plans (run(in, bits, stream)).
template <class Plan>
class HardAdapter final : public Detector {
 public:
  HardAdapter(std::string name, Plan plan) : Detector(std::move(name)), plan_(std::move(plan)) {}
  bool soft() const override { return false; }

 protected:
  void run_on(const DetectInput& in, View<std::uint8_t> bits, View<float>,
              const Stream& stream) override {
    plan_.run(in, bits, stream);
  }

 private:
  Plan plan_;
};

#ifdef MIMORX_DETECT_HAS_SPHERE
// psd with its per-vector statistics: counts the vectors the node cap stopped. On CUDA the
// counts come back only where the calls are synchronous anyway (check_device_values, as for
// `mimorx detect`); the simulator's asynchronous calls do not read them.
class SphereAdapter final : public Detector {
 public:
  SphereAdapter(std::string name, SpherePlan plan, bool count_on_device, int device)
      : Detector(std::move(name)),
        plan_(std::move(plan)),
        count_on_device_(count_on_device),
        device_(device) {}
  bool soft() const override { return false; }
  std::int64_t capped_vectors() const override { return capped_; }

 protected:
  void run_on(const DetectInput& in, View<std::uint8_t> bits, View<float>,
              const Stream& stream) override {
    const auto n = std::size_t(in.y.batch);
    stats_.resize(n);
    if (in.y.where != Memory::host) {
      if (!count_on_device_) {
        plan_.run(in, bits, {}, {}, {}, stream);
        return;
      }
      if (device_stats_.size() < n)
        device_stats_ = Buffer<SearchStats>(n, in.y.where, false, device_);
      plan_.run(in, bits, {}, View<SearchStats>(device_stats_.data(), in.y.batch, in.y.where), {},
                stream);
      device_stats_.copy_to_host(stats_.data(), n, stream);
      stream.synchronize();
    } else {
      plan_.run(in, bits, {}, View<SearchStats>(stats_.data(), in.y.batch, Memory::host), {},
                stream);
    }
    for (const auto& s : stats_) capped_ += s.capped;
  }

 private:
  SpherePlan plan_;
  bool count_on_device_;
  int device_;
  std::vector<SearchStats> stats_;
  Buffer<SearchStats> device_stats_;
  std::int64_t capped_ = 0;
};
#endif

#ifdef MIMORX_DETECT_HAS_STS
// sts with its per-vector statistics: counts the vectors the node cap stopped. On CUDA, as for
// psd, the counts come back only where the calls are synchronous anyway (check_device_values);
// the simulator's asynchronous calls do not read them.
class StsAdapter final : public Detector {
 public:
  StsAdapter(std::string name, StsPlan plan, bool count_on_device, int device)
      : Detector(std::move(name)),
        plan_(std::move(plan)),
        count_on_device_(count_on_device),
        device_(device) {}
  bool soft() const override { return true; }
  std::int64_t capped_vectors() const override { return capped_; }

 protected:
  void run_on(const DetectInput& in, View<std::uint8_t> bits, View<float> llrs,
              const Stream& stream) override {
    const auto n = std::size_t(in.y.batch);
    stats_.resize(n);
    if (in.y.where != Memory::host) {
      if (!count_on_device_) {
        plan_.run(in, bits, llrs, {}, stream);
        return;
      }
      if (device_stats_.size() < n)
        device_stats_ = Buffer<SearchStats>(n, in.y.where, false, device_);
      plan_.run(in, bits, llrs, View<SearchStats>(device_stats_.data(), in.y.batch, in.y.where),
                stream);
      device_stats_.copy_to_host(stats_.data(), n, stream);
      stream.synchronize();
    } else {
      plan_.run(in, bits, llrs, View<SearchStats>(stats_.data(), in.y.batch, Memory::host), stream);
    }
    for (const auto& s : stats_) capped_ += s.capped;
  }

 private:
  StsPlan plan_;
  bool count_on_device_;
  int device_;
  std::vector<SearchStats> stats_;
  Buffer<SearchStats> device_stats_;
  std::int64_t capped_ = 0;
};

// sts:CLIP's LLR clipping: a positive finite number.
float parse_clip(const std::string& spec, const std::string& value) {
  float v = 0.f;
  auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  require(ec == std::errc() && p == value.data() + value.size() && std::isfinite(v) && v > 0.f,
          "detector", "'" + spec + "': CLIP must be a positive number (LLR units, e.g. sts:8)");
  return v;
}
#endif

[[maybe_unused]] int parse_param(const std::string& spec, const std::string& value,
                                 const std::string& what) {
  int v = 0;
  auto [p, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  require(ec == std::errc() && p == value.data() + value.size() && v >= 1, "detector",
          "'" + spec + "': " + what + " must be a positive integer");
  return v;
}

// A detector without parameters refuses one ("mmse:4") rather than ignoring it.
[[maybe_unused]] void require_no_param(const std::string& spec, const std::string& why = "") {
  require(spec.find(':') == std::string::npos, "detector",
          "'" + spec + "': " + spec.substr(0, spec.find(':')) + " takes no parameter" + why);
}

using Factory = std::function<std::unique_ptr<Detector>(const std::string& spec,
                                                        const std::string& param, const MimoShape&,
                                                        const Backend&, const DetectorOptions&)>;

const std::map<std::string, Factory>& factories() {
  static const std::map<std::string, Factory> f = [] {
    std::map<std::string, Factory> m;
#ifdef MIMORX_DETECT_HAS_LINEAR
    for (auto [name, kind] :
         {std::pair{"zf", LinearKind::zf}, std::pair{"mmse", LinearKind::mmse}}) {
      m[name] = [kind](const std::string& spec, const std::string&, const MimoShape& s,
                       const Backend& b, const DetectorOptions& o) -> std::unique_ptr<Detector> {
        require_no_param(spec);
        const bool soft = o.soft;
        LinearConfig cfg;
        cfg.shape = s;
        cfg.kind = kind;
        cfg.soft = soft;
        cfg.check_device_values = o.check_device_values;
        return std::make_unique<SoftHardAdapter<LinearPlan>>(spec, LinearPlan(cfg, b), soft);
      };
    }
#endif
#ifdef MIMORX_DETECT_HAS_ML
    m["ml"] = [](const std::string& spec, const std::string&, const MimoShape& s, const Backend& b,
                 const DetectorOptions& o) -> std::unique_ptr<Detector> {
      require_no_param(spec);
      const bool soft = o.soft;
      MlConfig cfg;
      cfg.shape = s;
      cfg.soft = soft;
      cfg.check_device_values = o.check_device_values;
      return std::make_unique<SoftHardAdapter<MlPlan>>(spec, MlPlan(cfg, b), soft);
    };
#endif
#ifdef MIMORX_DETECT_HAS_SPHERE
    m["psd"] = [](const std::string& spec, const std::string& param, const MimoShape& s,
                  const Backend& b, const DetectorOptions& o) -> std::unique_ptr<Detector> {
      require(!o.soft, "detector",
              "'psd' gives hard decisions only; use mmse, zf, ml, sts, nway:N, kbest:K or trellis "
              "for LLRs");
      SphereConfig cfg;
      cfg.shape = s;
      // psd:LANES picks the CUDA threads per vector (1, 8, 16, 32); plain psd: automatic.
      cfg.lanes = param.empty() ? 0 : parse_param(spec, param, "LANES");
      cfg.node_cap = o.psd_node_cap;
      return std::make_unique<SphereAdapter>(spec, SpherePlan(cfg, b), o.check_device_values,
                                             b.is_cuda() ? b.device() : 0);
    };
#endif
#ifdef MIMORX_DETECT_HAS_STS
    m["sts"] = [](const std::string& spec, const std::string& param, const MimoShape& s,
                  const Backend& b, const DetectorOptions& o) -> std::unique_ptr<Detector> {
      StsConfig cfg;
      cfg.shape = s;
      // sts: exact max-log; sts:CLIP: LLRs clipped at +-CLIP, exact below it.
      cfg.clip = param.empty() ? 0.f : parse_clip(spec, param);
      cfg.node_cap = o.psd_node_cap;
      cfg.check_device_values = o.check_device_values;
      return std::make_unique<StsAdapter>(spec, StsPlan(cfg, b), o.check_device_values,
                                          b.is_cuda() ? b.device() : 0);
    };
#endif
#ifdef MIMORX_DETECT_HAS_NWAY
    m["nway"] = [](const std::string& spec, const std::string& param, const MimoShape& s,
                   const Backend& b, const DetectorOptions& o) -> std::unique_ptr<Detector> {
      NwayConfig cfg;
      cfg.shape = s;
      cfg.n_ways = param.empty() ? 1 : parse_param(spec, param, "N");
      cfg.check_device_values = o.check_device_values;
      return std::make_unique<SoftHardAdapter<NwayPlan>>(spec, NwayPlan(cfg, b), true);
    };
#endif
#ifdef MIMORX_DETECT_HAS_KBEST
    m["kbest"] = [](const std::string& spec, const std::string& param, const MimoShape& s,
                    const Backend& b, const DetectorOptions& o) -> std::unique_ptr<Detector> {
      KbestConfig cfg;
      cfg.shape = s;
      cfg.k = param.empty() ? 16 : parse_param(spec, param, "K");
      cfg.check_device_values = o.check_device_values;
      return std::make_unique<SoftHardAdapter<KbestPlan>>(spec, KbestPlan(cfg, b), true);
    };
#endif
#ifdef MIMORX_DETECT_HAS_TRELLIS
    m["trellis"] = [](const std::string& spec, const std::string&, const MimoShape& s,
                      const Backend& b, const DetectorOptions& o) -> std::unique_ptr<Detector> {
      require_no_param(spec, " (its list size is the constellation size)");
      TrellisConfig cfg;
      cfg.shape = s;
      cfg.check_device_values = o.check_device_values;
      return std::make_unique<SoftHardAdapter<TrellisPlan>>(spec, TrellisPlan(cfg, b), true);
    };
#endif
#ifdef MIMORX_DETECT_HAS_LR
    for (auto [name, kind] : {std::pair{"lr-zf", LrKind::zf}, std::pair{"lr-mmse", LrKind::mmse},
                              std::pair{"lr-mmse-sic", LrKind::mmse_sic}}) {
      m[name] = [kind](const std::string& spec, const std::string&, const MimoShape& s,
                       const Backend& b, const DetectorOptions& o) -> std::unique_ptr<Detector> {
        require_no_param(spec);
        const bool soft = o.soft;
        require(
            !soft, "detector",
            "'" + spec +
                "' gives hard decisions only; use mmse, zf, ml, sts, nway:N, kbest:K or trellis "
                "for LLRs");
        LrConfig cfg;
        cfg.shape = s;
        cfg.kind = kind;
        return std::make_unique<HardAdapter<LrPlan>>(spec, LrPlan(cfg, b));
      };
    }
#endif
    return m;
  }();
  return f;
}

}  // namespace

std::vector<std::string> detector_names() {
  std::vector<std::string> names;
  for (const auto& [k, v] : factories())
    names.push_back(k == "nway"    ? "nway:N"
                    : k == "kbest" ? "kbest:K"
                    : k == "sts"   ? "sts[:CLIP]"
                                   : k);
  return names;
}

std::unique_ptr<Detector> make_detector(const std::string& spec, const MimoShape& shape,
                                        const Backend& backend, bool soft) {
  return make_detector(spec, shape, backend, DetectorOptions{.soft = soft});
}

std::unique_ptr<Detector> make_detector(const std::string& spec, const MimoShape& shape,
                                        const Backend& backend, const DetectorOptions& options) {
  const auto colon = spec.find(':');
  const std::string name = spec.substr(0, colon);
  const std::string param = colon == std::string::npos ? "" : spec.substr(colon + 1);
  const auto it = factories().find(name);
  if (it == factories().end()) {
    std::string list;
    for (const auto& n : detector_names()) list += (list.empty() ? "" : ", ") + n;
    throw InvalidArgument("detector: '" + spec + "' is not available; this build offers " + list);
  }
  require(colon == std::string::npos || !param.empty(), "detector",
          "'" + spec + "': nothing after ':'; give a value (e.g. nway:4) or the name alone");
  return it->second(spec, param, shape, backend, options);
}

}  // namespace mimorx::detect
