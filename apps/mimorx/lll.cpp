// mimorx lll: LLL-reduces bases given in fplll's text format, in place of `fplll -a lll`.
//   mimorx lll [file] [-d delta] [-e eta] [--precision float|double] [--transform] [--check]
//              [--backend cpu|cuda|auto] [--method auto|sequential|all-swap|block] [--block l]
//              [--presort | --keep-order] [--no-lattice-check]
// Input: one or more matrices "[[a b c]\n[d e f]\n]" (rows = basis vectors), from the file or
// stdin; a batch of matrices of one shape is reduced in one plan run. Output: the reduced
// matrices in input order, in fplll's bytes (integers stay integers); with --transform each is
// followed by U (U * B = B' in fplll's row convention), as `fplll -of bu`. --check verifies
// every output exactly (lll_exact.hpp; the figures from lattice/quality.hpp), prints the report
// on stderr and fails (exit 2) if one is not reduced.
// Defaults are fplll's: delta 0.99, eta 0.51, the vectors in their input order, and on the CPU
// the sequential method (--method auto), whose lazy size reduction (LllConfig::eta) takes
// fplll's path (docs/lll.md, "mimorx lll and fplll"). --presort puts the vectors in order of
// increasing length first (shorter bases; not fplll's output).
// float32 outputs are checked against the input lattice (LllConfig::lattice_check):
// --no-lattice-check turns that off. Whatever the options, every result is checked in exact
// integer arithmetic (GMP, lll_exact.hpp) before anything is printed: B' = U B with det U = +-1;
// a result off its lattice fails with exit status 2 and prints nothing. Entries are integers of
// at most 2^53 (2^24 with --precision float); --check verifies the LLL conditions exactly too.
#include "mimorx/lattice/lll.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <map>
#include <sstream>

#include "command.hpp"
#include "io.hpp"
#include "lll_exact.hpp"
#include "mimorx/core/buffer.hpp"
#include "mimorx/core/error.hpp"
#include "mimorx/lattice/fplll_format.hpp"
#include "mimorx/lattice/quality.hpp"

namespace {

using namespace mimorx;
using namespace mimorx::lattice;

struct LllOptions {
  std::string in = "-", algorithm = "lll", precision = "double", backend = "cpu", method = "auto";
  double delta = 0.99, eta = 0.51;  // fplll's defaults
  bool transform = false, check = false, presort = false, keep_order = false,
       no_lattice_check = false;
  int block = 0;
};

// The largest entry each precision holds exactly: inputs beyond it are refused (float32) or,
// when the float64 reduction loses its way, reported with this limit.
template <class F>
constexpr double kExactLimit = sizeof(F) == 4 ? 16777216.0 : 9007199254740992.0;

template <class F>
const char* precision_name() {
  return sizeof(F) == 4 ? "float" : "double";
}

// Entries of `group` beyond what F holds exactly are refused before any work.
template <class F>
void check_magnitudes(const std::vector<TextBasis*>& group, const std::vector<std::size_t>& index) {
  for (std::size_t k = 0; k < group.size(); ++k) {
    double top = 0;
    for (double v : group[k]->b) top = std::max(top, std::abs(v));
    require(
        top <= kExactLimit<F>, "precision",
        fmt::format("matrix {} has entries up to {:.0f}, beyond 2^{} = {:.0f}, the largest "
                    "--precision {} holds exactly; use --precision double (entries up to "
                    "2^53)",
                    index[k], top, sizeof(F) == 4 ? 24 : 53, kExactLimit<F>, precision_name<F>()));
  }
}

// Why the reducer gave up on matrix `index`: a dependent input, or a precision loss.
template <class F>
[[noreturn]] void reduction_failed(const TextBasis& in, std::size_t index, LllStatus status) {
  if (status == LllStatus::singular && !mimorx::cli::independent(in.n, in.m, in.b))
    throw InvalidArgument(fmt::format(
        "input: matrix {} ({}x{}): the vectors are linearly dependent or a vector is zero; LLL "
        "needs a basis",
        index, in.m, in.n));
  const std::string what = status == LllStatus::singular
                               ? "the vectors are independent (checked exactly) but the "
                                 "reduction could no longer tell them apart"
                               : to_string(status);
  throw NumericalError(fmt::format(
      "lll: matrix {} ({}x{}): the --precision {} reduction lost precision ({}); this basis "
      "needs more than {}'s {} bits (mimorx lll has no multi-precision mode): {}use fplll",
      index, in.m, in.n, precision_name<F>(), what, precision_name<F>(), sizeof(F) == 4 ? 24 : 53,
      sizeof(F) == 4 ? "try --precision double or " : ""));
}

// The --check report of one result on stderr; throws when the exact check finds it not reduced.
template <class F>
void report_check(const LllOptions& o, const TextBasis& in, const std::vector<double>& out,
                  std::size_t index) {
  const int n = in.n, m = in.m;
  CheckOptions co;
  co.delta = o.delta;
  if (sizeof(F) == 4) {
    co.eps_mu = 0.01;
    co.eps_delta = 1e-3;
  }
  co.condition_number = m <= 512;
  const auto q = check_lll(n, m, out.data(), co);  // the figures; the verdict is exact
  const std::string why =
      mimorx::cli::lll_violation(n, m, out, o.delta - co.eps_delta, o.eta + co.eps_mu);
  std::cerr << fmt::format(
      "check: matrix {} ({} vectors, dim {}): {}; max|mu| {:.4f} (eta {}), min Lovasz ratio "
      "{:.4f} (delta {}), orthogonality defect {:.4g}, Hermite factor {:.4f}, condition {:.4g}, "
      "B' = U B with det U = +-1 (exact)\n",
      index, m, n, why.empty() ? "LLL-reduced" : "NOT reduced", q.max_mu, o.eta, q.lovasz_ratio,
      o.delta, q.orthogonality_defect, q.hermite_factor, q.condition_number);
  if (!why.empty())
    throw NumericalError(fmt::format("check: matrix {} is not LLL-reduced: {}", index, why));
}

template <class F>
void reduce_group(const LllOptions& o, const Backend& backend, std::vector<TextBasis*>& group,
                  std::vector<std::vector<std::int64_t>*>& ts,
                  const std::vector<std::size_t>& index) {
  check_magnitudes<F>(group, index);
  const int n = group[0]->n, m = group[0]->m;
  const std::int64_t nb = std::int64_t(group.size());
  LllConfig cfg;
  cfg.n = n;
  cfg.m = m;
  cfg.delta = o.delta;
  cfg.transform = true;  // every result is checked exactly against its input: B' = B T
  cfg.lattice_check = !o.no_lattice_check;
  // auto on the CPU: the sequential method at every size, fplll's algorithm (the library's
  // automatic choice, block from 128 vectors, gives other bases and loses precision on q-ary
  // lattices of that size that the sequential method reduces).
  cfg.method =
      o.method == "auto" && !backend.is_cuda() ? LllMethod::sequential : parse_lll_method(o.method);
  cfg.block = o.block;
  cfg.presort = o.presort;
  cfg.eta = o.eta;
  LllPlan plan(cfg, backend);
  const std::size_t nm = std::size_t(n) * m, mm = std::size_t(m) * m;
  auto hb = Buffer<F>::host(nm * nb);
  for (std::int64_t k = 0; k < nb; ++k)
    for (std::size_t i = 0; i < nm; ++i) hb[k * nm + i] = F(group[k]->b[i]);
  auto ht = Buffer<std::int64_t>::host(mm * nb);
  std::vector<LllStatus> st(nb);
  View<LllStatus> sv(st.data(), nb, Memory::host);
  if (backend.is_cuda()) {
    auto db = Buffer<F>::device(nm * nb, backend.device());
    auto dt = Buffer<std::int64_t>::device(ht.size(), backend.device());
    db.copy_from(hb);
    plan.run(MatrixBatch<F>::over(db, nb, n, m), MatrixBatch<std::int64_t>::over(dt, nb, m, m), sv);
    db.copy_to_host(hb.data(), hb.size());
    dt.copy_to_host(ht.data(), ht.size());
  } else {
    plan.run(MatrixBatch<F>::over(hb, nb, n, m), MatrixBatch<std::int64_t>::over(ht, nb, m, m), sv);
  }
  for (std::int64_t k = 0; k < nb; ++k) {
    if (st[k] != LllStatus::reduced) reduction_failed<F>(*group[k], index[k], st[k]);
    std::vector<double> out(nm);
    for (std::size_t i = 0; i < nm; ++i) out[i] = double(hb[k * nm + i]);
    ts[k]->assign(ht.data() + k * mm, ht.data() + (k + 1) * mm);
    const std::string off = mimorx::cli::lattice_violation(n, m, group[k]->b, out, *ts[k]);
    if (!off.empty())
      throw NumericalError(fmt::format(
          "lll: matrix {}: the --precision {} result is not a basis of the input lattice ({}); "
          "nothing printed. {}",
          index[k], precision_name<F>(), off,
          sizeof(F) == 4 ? "Use --precision double" : "Use fplll for this basis"));
    if (o.check) report_check<F>(o, *group[k], out, index[k]);
    group[k]->b = std::move(out);
  }
}

void run_lll(const LllOptions& o) {
  require(o.algorithm == "lll", "a", "'" + o.algorithm + "'; mimorx lll implements only lll");
  require(o.precision == "float" || o.precision == "double", "precision",
          "'" + o.precision + "'; allowed: float, double");
  std::istringstream in(mimorx::cli::read_input(o.in, "file"));
  std::vector<TextBasis> bases;
  int line = 1;
  for (TextBasis tb; read_fplll(in, tb, &line);) bases.push_back(std::move(tb));
  require(!bases.empty(), "input",
          "no matrix found; expected fplll's format [[a b c]\\n[d e f]\\n]");
  const Backend backend = Backend::parse(o.backend);
  std::vector<std::vector<std::int64_t>> ts(bases.size());
  // Batches: all matrices of one shape go through one plan run.
  std::map<std::pair<int, int>, std::vector<std::size_t>> groups;
  for (std::size_t k = 0; k < bases.size(); ++k) {
    require(bases[k].m <= bases[k].n, "input",
            fmt::format("matrix {} has {} vectors of dimension {}; more vectors than the "
                        "dimension are linearly dependent",
                        k, bases[k].m, bases[k].n));
    groups[{bases[k].n, bases[k].m}].push_back(k);
  }
  for (auto& [shape, idx] : groups) {
    std::vector<TextBasis*> g;
    std::vector<std::vector<std::int64_t>*> gt;
    for (auto k : idx) {
      g.push_back(&bases[k]);
      gt.push_back(&ts[k]);
    }
    if (o.precision == "float") {
      reduce_group<float>(o, backend, g, gt, idx);
    } else {
      reduce_group<double>(o, backend, g, gt, idx);
    }
  }
  std::ostringstream text;
  for (std::size_t k = 0; k < bases.size(); ++k) {
    write_fplll(text, bases[k].n, bases[k].m, bases[k].b.data(), bases[k].integer);
    if (o.transform) write_fplll_transform(text, bases[k].m, ts[k].data());
  }
  mimorx::cli::write_stdout(text.str());
}

void add_lll(CLI::App& app) {
  auto o = std::make_shared<LllOptions>();
  auto* cmd = app.add_subcommand(
      "lll", "LLL-reduce bases in fplll's format (rows are vectors), in place of `fplll -a lll`");
  cmd->footer(
      "fplll compatibility: -a lll, -d and -e as fplll (defaults 0.99 and 0.51), input and "
      "output in fplll's text format, --transform = fplll -of bu. With the defaults (input "
      "order, --backend cpu, --method auto) the reduction is fplll's algorithm and prints "
      "fplll's basis byte for byte, except where float64 and fplll's arithmetic round a "
      "multiplier differently (every output is checked exactly either way). --presort, "
      "--method all-swap|block and --backend cuda give other, equally LLL-reduced bases of the "
      "same lattice. Not offered: fplll's other algorithms (bkz, svp, ...), -of with other "
      "formats, -m/-f/-p/-z/-y/-l, more vectors than the dimension, entries beyond 2^53. "
      "Beyond fplll: several matrices in one input, each reduced. Details: docs/lll.md, "
      "'mimorx lll and fplll'.");
  cmd->add_option("file", o->in, "Input file ('-' or none: stdin)");
  cmd->add_option("-a", o->algorithm, "Algorithm (only 'lll'; accepted as fplll's -a lll)")
      ->capture_default_str();
  cmd->add_option("-d,--delta", o->delta, "Lovasz parameter delta in [0.25, 1), as fplll's -d")
      ->capture_default_str();
  cmd->add_option("-e,--eta", o->eta,
                  "Size-reduction bound eta, 0.5 or in (0.5, sqrt(delta)), as fplll's -e: a "
                  "vector is size-reduced when one of its |mu| exceeds eta")
      ->capture_default_str();
  cmd->add_option("--precision", o->precision, "Arithmetic: float (float32) or double (float64)")
      ->capture_default_str();
  cmd->add_flag("--transform", o->transform,
                "Also print U (U * B = B', rows as vectors) after each basis (fplll -of bu)");
  cmd->add_flag("--check", o->check,
                "Verify every output, print the quality report on stderr, fail if not reduced");
  cmd->add_option("--backend", o->backend, "cpu, cuda[:N] or auto")->capture_default_str();
  cmd->add_option("--method", o->method,
                  "auto, sequential, all-swap or block (auto: sequential on the CPU, fplll's "
                  "algorithm; on CUDA all-swap up to 64 vectors, else block)")
      ->capture_default_str();
  cmd->add_option("--block", o->block, "Block size of the block method (0 = automatic)")
      ->capture_default_str();
  auto* presort = cmd->add_flag(
      "--presort", o->presort,
      "Sort the vectors shortest first before reducing: markedly shorter bases on random "
      "inputs, but not fplll's output (fplll keeps the input order)");
  cmd->add_flag("--keep-order", o->keep_order,
                "Reduce the vectors in their input order, as fplll (the default)")
      ->excludes(presort);
  cmd->add_flag("--no-lattice-check", o->no_lattice_check,
                "float32: skip the check that each output is still a basis of the input lattice "
                "(faster; an ill-conditioned input may then end slightly off its lattice)");
  cmd->callback([o] { run_lll(*o); });
}

}  // namespace
MIMORX_REGISTER_COMMAND(lll, add_lll);
