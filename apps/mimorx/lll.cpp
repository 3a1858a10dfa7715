// mimorx lll: LLL-reduces bases given in fplll's text format, as a drop-in for `fplll -a lll`.
//   mimorx lll [file] [-d delta] [--precision float|double] [--transform] [--check]
//              [--backend cpu|cuda|auto] [--method auto|sequential|all-swap|block] [--block l]
//              [--keep-order] [--no-lattice-check]
// Input: one or more matrices "[[a b c]\n[d e f]\n]" (rows = basis vectors), from the file or
// stdin; a batch of matrices of one shape is reduced in one plan run. Output: the reduced
// matrices in input order, same format (integers stay integers); with --transform each is
// followed by U = T^T (U * B = B' in fplll's row convention). --check verifies every output
// (lattice/quality.hpp), prints the report on stderr and fails (exit 2) if one is not reduced.
// The default delta is fplll's, 0.99. The vectors are put in order of increasing length before
// the reduction (LllConfig::presort; fplll keeps the input order): --keep-order turns that off.
// float32 outputs are checked against the input lattice (LllConfig::lattice_check):
// --no-lattice-check turns that off.
#include "mimorx/lattice/lll.hpp"

#include <fmt/format.h>

#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "command.hpp"
#include "mimorx/core/buffer.hpp"
#include "mimorx/core/error.hpp"
#include "mimorx/lattice/fplll_format.hpp"
#include "mimorx/lattice/quality.hpp"

namespace {

using namespace mimorx;
using namespace mimorx::lattice;

struct LllOptions {
  std::string in = "-", algorithm = "lll", precision = "double", backend = "cpu", method = "auto";
  double delta = 0.99;
  bool transform = false, check = false, keep_order = false, no_lattice_check = false;
  int block = 0;
};

template <class F>
void reduce_group(const LllOptions& o, const Backend& backend, std::vector<TextBasis*>& group,
                  std::vector<std::vector<std::int64_t>*>& ts) {
  const int n = group[0]->n, m = group[0]->m;
  const std::int64_t nb = std::int64_t(group.size());
  LllConfig cfg;
  cfg.n = n;
  cfg.m = m;
  cfg.delta = o.delta;
  cfg.transform = o.transform || o.check;
  cfg.lattice_check = !o.no_lattice_check;
  cfg.method = parse_lll_method(o.method);
  cfg.block = o.block;
  cfg.presort = !o.keep_order;
  LllPlan plan(cfg, backend);
  const std::size_t nm = std::size_t(n) * m, mm = std::size_t(m) * m;
  auto hb = Buffer<F>::host(nm * nb);
  for (std::int64_t k = 0; k < nb; ++k)
    for (std::size_t i = 0; i < nm; ++i) hb[k * nm + i] = F(group[k]->b[i]);
  auto ht = Buffer<std::int64_t>::host(cfg.transform ? mm * nb : 0);
  std::vector<LllStatus> st(nb);
  View<LllStatus> sv(st.data(), nb, Memory::host);
  if (backend.is_cuda()) {
    auto db = Buffer<F>::device(nm * nb, backend.device());
    auto dt = Buffer<std::int64_t>::device(ht.size(), backend.device());
    db.copy_from(hb);
    plan.run(
        MatrixBatch<F>::over(db, nb, n, m),
        cfg.transform ? MatrixBatch<std::int64_t>::over(dt, nb, m, m) : MatrixBatch<std::int64_t>(),
        sv);
    db.copy_to_host(hb.data(), hb.size());
    if (cfg.transform) dt.copy_to_host(ht.data(), ht.size());
  } else {
    plan.run(
        MatrixBatch<F>::over(hb, nb, n, m),
        cfg.transform ? MatrixBatch<std::int64_t>::over(ht, nb, m, m) : MatrixBatch<std::int64_t>(),
        sv);
  }
  for (std::int64_t k = 0; k < nb; ++k) {
    if (st[k] == LllStatus::singular)
      throw InvalidArgument(fmt::format(
          "input: matrix {} ({}x{}): the vectors are linearly dependent or a vector is zero; "
          "LLL needs a basis",
          k, m, n));
    if (st[k] != LllStatus::reduced)
      throw NumericalError(
          fmt::format("lll: matrix {}: {}; try --precision double", k, to_string(st[k])));
    std::vector<double> out(nm);
    for (std::size_t i = 0; i < nm; ++i) out[i] = double(hb[k * nm + i]);
    if (cfg.transform) ts[k]->assign(ht.data() + k * mm, ht.data() + (k + 1) * mm);
    if (o.check) {
      // The exact check: B T must equal B' (exact when B and T are integer) and det T = +-1.
      const auto tr = check_transform(n, m, group[k]->b.data(), out.data(), ts[k]->data(),
                                      sizeof(F) == 4 ? 1e-5 : 1e-9);
      CheckOptions co;
      co.delta = o.delta;
      if (sizeof(F) == 4) {
        co.eps_mu = 0.01;
        co.eps_delta = 1e-3;
      }
      co.condition_number = m <= 512;
      const auto q = check_lll(n, m, out.data(), co);
      std::cerr << fmt::format(
          "check: matrix {} ({} vectors, dim {}): {}; max|mu| {:.4f}, min Lovasz ratio {:.4f} "
          "(delta {}), orthogonality defect {:.4g}, Hermite factor {:.4f}, condition {:.4g}, "
          "det T {} ({}), |B T - B'| {:.2g}\n",
          k, m, n, q.reduced() && tr.ok() ? "LLL-reduced" : "NOT reduced", q.max_mu, q.lovasz_ratio,
          o.delta, q.orthogonality_defect, q.hermite_factor, q.condition_number, tr.det,
          tr.exact_det ? "exact" : "LU", tr.residual);
      if (!q.reduced() || !tr.ok())
        throw NumericalError(fmt::format("check: matrix {} is not LLL-reduced: {}{}", k, q.message,
                                         tr.ok() ? "" : "; " + tr.message));
    }
    group[k]->b = std::move(out);
  }
}

void run_lll(const LllOptions& o) {
  require(o.algorithm == "lll", "a", "'" + o.algorithm + "'; mimorx lll implements only lll");
  require(o.precision == "float" || o.precision == "double", "precision",
          "'" + o.precision + "'; allowed: float, double");
  std::ifstream file;
  std::istream* in = &std::cin;
  if (o.in != "-") {
    file.open(o.in);
    require(bool(file), "file", "cannot open '" + o.in + "'");
    in = &file;
  }
  std::vector<TextBasis> bases;
  int line = 1;
  for (TextBasis tb; read_fplll(*in, tb, &line);) bases.push_back(std::move(tb));
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
      reduce_group<float>(o, backend, g, gt);
    } else {
      reduce_group<double>(o, backend, g, gt);
    }
  }
  for (std::size_t k = 0; k < bases.size(); ++k) {
    write_fplll(std::cout, bases[k].n, bases[k].m, bases[k].b.data(), bases[k].integer);
    if (o.transform) write_fplll_transform(std::cout, bases[k].m, ts[k].data());
  }
  std::cout.flush();
}

void add_lll(CLI::App& app) {
  auto o = std::make_shared<LllOptions>();
  auto* cmd = app.add_subcommand(
      "lll", "LLL-reduce bases in fplll's format (rows are vectors); drop-in for fplll -a lll");
  cmd->add_option("file", o->in, "Input file ('-' or none: stdin)");
  cmd->add_option("-a", o->algorithm, "Algorithm (only 'lll'; accepted for fplll compatibility)");
  cmd->add_option("-d,--delta", o->delta,
                  "Lovasz parameter delta in [0.25, 1) (default 0.99, as fplll)");
  cmd->add_option("--precision", o->precision, "Arithmetic: float (float32) or double (float64)");
  cmd->add_flag("--transform", o->transform,
                "Also print U (U * B = B', rows as vectors) after each basis");
  cmd->add_flag("--check", o->check,
                "Verify every output, print the quality report on stderr, fail if not reduced");
  cmd->add_option("--backend", o->backend, "cpu, cuda[:N] or auto");
  cmd->add_option("--method", o->method, "auto, sequential, all-swap or block");
  cmd->add_option("--block", o->block, "Block size of the block method (0 = automatic)");
  cmd->add_flag("--keep-order", o->keep_order,
                "Reduce the vectors in their input order (default: shortest first, which "
                "gives shorter bases; fplll keeps the input order)");
  cmd->add_flag("--no-lattice-check", o->no_lattice_check,
                "float32: skip the check that each output is still a basis of the input lattice "
                "(faster; an ill-conditioned input may then end slightly off its lattice)");
  cmd->callback([o] { run_lll(*o); });
}

}  // namespace
MIMORX_REGISTER_COMMAND(lll, add_lll);
