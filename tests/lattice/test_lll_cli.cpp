// `mimorx lll` as a drop-in for `fplll -a lll`: format round trip, batches, --check,
// --transform, clear errors, and the same reduced quality as fplll on random integer bases.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "mimorx/lattice/fplll_format.hpp"
#include "mimorx/lattice/quality.hpp"
#include "support/cli.hpp"
#include "support/lll_support.hpp"

using namespace mimorx;
using namespace mimorx::lattice;

namespace {

std::string temp_file(const std::string& text) {
  char name[] = "/tmp/mimorx_lll_cli_XXXXXX";
  const int fd = mkstemp(name);
  if (fd >= 0) close(fd);
  std::ofstream(name) << text;
  return name;
}

std::vector<TextBasis> parse_all(const std::string& text) {
  std::istringstream s(text);
  std::vector<TextBasis> out;
  for (TextBasis b; read_fplll(s, b);) out.push_back(b);
  return out;
}

std::string to_text(const std::vector<TextBasis>& bs) {
  std::ostringstream s;
  for (const auto& b : bs) write_fplll(s, b.n, b.m, b.b.data(), true);
  return s.str();
}

std::string stdout_of(const std::string& cmd) {
  std::string text;
  FILE* p = popen(cmd.c_str(), "r");
  char buf[4096];
  while (p && fgets(buf, sizeof buf, p)) text += buf;
  if (p) pclose(p);
  return text;
}

}  // namespace

TEST(LllCli, ReducesABatchAndChecks) {
  MIMORX_SEEDED_GENERATOR(g);
  std::vector<TextBasis> in;
  for (int n : {3, 5, 8, 8, 12}) {
    TextBasis b;
    b.n = b.m = n;
    b.b = test::integer_basis(g, n, n, 1000);
    in.push_back(b);
  }
  const auto file = temp_file(to_text(in));
  const auto r = test::run_cli("lll -d 0.99 --check " + file);
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("LLL-reduced"), std::string::npos) << r.out;
  const auto plain = test::run_cli("lll -d 0.99 " + file + " 2>/dev/null");
  const auto out = parse_all(plain.out);
  ASSERT_EQ(out.size(), in.size());
  for (std::size_t k = 0; k < in.size(); ++k) {
    EXPECT_TRUE(out[k].integer);
    // fplll's eta 0.51 (the CLI's default): |mu| <= 0.51
    const auto q = check_lll(out[k].n, out[k].m, out[k].b.data(), {0.99, 0.01 + 1e-6});
    EXPECT_TRUE(q.reduced()) << q.message;
    const auto q0 = check_lll(in[k].n, in[k].m, in[k].b.data(), {0.99, 1e-6, 1e-9, false});
    EXPECT_NEAR(q.log_volume, q0.log_volume, 1e-9 * std::abs(q0.log_volume) + 1e-9);
  }
  std::remove(file.c_str());
}

TEST(LllCli, TransformPrintsUWithUBEqualsReduced) {
  const auto file = temp_file("[[1 2 3]\n[4 5 7]\n[2 9 1]\n]\n");
  const auto r = test::run_cli("lll --transform " + file);
  ASSERT_EQ(r.status, 0) << r.out;
  const auto mats = parse_all(r.out);
  ASSERT_EQ(mats.size(), 2u);
  // Column-major here: columns are fplll's rows. B' = B T with T = U^T, i.e. column j of B'
  // = sum_k U(j, k) b_k; mats[1] column j holds row j of U.
  const std::vector<double> b = {1, 2, 3, 4, 5, 7, 2, 9, 1};
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 3; ++i) {
      double s = 0;
      for (int k = 0; k < 3; ++k) s += mats[1].b[j * 3 + k] * b[k * 3 + i];
      EXPECT_EQ(s, mats[0].b[j * 3 + i]);
    }
  std::remove(file.c_str());
}

TEST(LllCli, FloatPrecisionAndMethods) {
  MIMORX_SEEDED_GENERATOR(g);
  TextBasis b;
  b.n = b.m = 16;
  b.b = test::integer_basis(g, 16, 16, 100);
  const auto file = temp_file(to_text({b}));
  for (const char* opts : {"--precision float", "--method all-swap", "--method block --block 8",
                           "--keep-order", "--keep-order --method all-swap --precision float"}) {
    const auto r = test::run_cli(std::string("lll -d 0.75 --check ") + opts + " " + file);
    EXPECT_EQ(r.status, 0) << opts << ": " << r.out;
  }
  std::remove(file.c_str());
}

// The default keeps the input order (as fplll); --presort sorts the vectors shortest first. On
// a basis listed longest first the two give different bases, both reduced, of the same lattice;
// --keep-order is the default spelled out and excludes --presort.
TEST(LllCli, PresortIsAnOptionAndKeepOrderTheDefault) {
  MIMORX_SEEDED_GENERATOR(g);
  TextBasis b;
  b.n = b.m = 24;
  b.b = test::integer_basis(g, 24, 24, 1 << 12);
  for (int j = 0; j < 24; ++j)  // column j scaled by 24 - j: longest first
    for (int i = 0; i < 24; ++i) b.b[std::size_t(j) * 24 + i] *= 24 - j;
  const auto file = temp_file(to_text({b}));
  const auto plain = test::run_cli("lll -d 0.75 --check " + file + " 2>/dev/null");
  const auto kept = test::run_cli("lll -d 0.75 --check --keep-order " + file + " 2>/dev/null");
  const auto sorted = test::run_cli("lll -d 0.75 --check --presort " + file + " 2>/dev/null");
  const auto both = test::run_cli_split("lll --presort --keep-order " + file);
  std::remove(file.c_str());
  ASSERT_EQ(plain.status, 0) << plain.out;
  ASSERT_EQ(sorted.status, 0) << sorted.out;
  EXPECT_EQ(plain.out, kept.out);
  EXPECT_NE(plain.out, sorted.out);
  EXPECT_EQ(both.status, 2) << both.err;
}

// -e sets eta: a bound below 1/2 or at or beyond sqrt(delta) is refused; the outputs of 0.5
// and 0.51 are reduced for their eta (the exact --check) and may differ (the lazy rule).
TEST(LllCli, EtaIsValidatedAndChecked) {
  MIMORX_SEEDED_GENERATOR(g);
  TextBasis b;
  b.n = b.m = 16;
  b.b = test::integer_basis(g, 16, 16, 1 << 20);
  const auto file = temp_file(to_text({b}));
  for (const char* eta : {"0.5", "0.51", "0.7"}) {
    const auto r = test::run_cli(std::string("lll --check -e ") + eta + " " + file + " 2>&1");
    EXPECT_EQ(r.status, 0) << eta << ": " << r.out;
    EXPECT_NE(r.out.find(std::string("(eta ") + eta + ")"), std::string::npos) << r.out;
  }
  for (const char* bad : {"-e 0.49", "-e 0.995", "-d 0.5 -e 0.75"}) {
    const auto r = test::run_cli_split(std::string("lll ") + bad + " " + file);
    EXPECT_EQ(r.status, 2) << bad;
    EXPECT_NE(r.err.find("eta"), std::string::npos) << bad << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << bad << ": " << r.err;
  }
  std::remove(file.c_str());
}

// --no-lattice-check (LllConfig::lattice_check = false) is accepted and still gives a reduced
// basis on a well-conditioned input (the check against B T is what it skips; the plan tests
// show what that costs on ill-conditioned ones).
TEST(LllCli, NoLatticeCheckStillReduces) {
  MIMORX_SEEDED_GENERATOR(g);
  TextBasis b;
  b.n = b.m = 12;
  b.b = test::integer_basis(g, 12, 12, 1 << 10);
  const auto file = temp_file(to_text({b}));
  const auto r =
      test::run_cli("lll -d 0.75 --precision float --no-lattice-check --check " + file + " 2>&1");
  std::remove(file.c_str());
  EXPECT_EQ(r.status, 0) << r.out;
}

TEST(LllCli, ClearErrors) {
  struct Case {
    std::string text, args, expect;
  };
  const std::vector<Case> cases = {
      {"[[1 2][3 4]", "", "unterminated"},
      {"[[1 2][3 4 5]]", "", "row 1"},
      {"[[1 2][2 4]]", "", "linearly dependent"},
      {"[[1 x][2 4]]", "", "not a number"},
      {"[[1 0][0 1]]", "-d 1.5", "delta"},
      {"[[1 0 0][0 1 0][1 1 0][2 1 0]]", "", "more vectors"},
      {"[[1 0][0 1]]", "--precision half", "precision"},
      // Integers read exactly: no rounding to double before the 2^53 check.
      {"[[9007199254740993 0][0 1]]", "", "exceeds 2^53"},
      {"[[-9007199254740993 0][0 1]]", "", "exceeds 2^53"},
      {"[[123456789012345678901234567890 0][0 1]]", "", "exceeds 2^53"},
      {"[[1e20 0][0 1]]", "", "exponent form"},
      {"[[1.5 2][3 5]]", "", "not an integer"},
      {"[[100000000 3][7 100000001]]", "--precision float", "beyond 2^24"},
  };
  for (const auto& c : cases) {
    const auto file = temp_file(c.text);
    const auto r = test::run_cli_split("lll " + c.args + " " + file);
    EXPECT_EQ(r.status, 2) << c.text << " -> " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << c.text << " -> " << r.err;
    EXPECT_NE(r.err.find(c.expect), std::string::npos) << c.text << " -> " << r.err;
    std::remove(file.c_str());
  }
  // 2^53 itself is exact and accepted.
  const auto file = temp_file("[[9007199254740992 0][0 1]]");
  EXPECT_EQ(test::run_cli_split("lll " + file).status, 0);
  std::remove(file.c_str());
}

TEST(LllCli, SameQualityAsFplll) {
  if (access("/usr/bin/fplll", X_OK) != 0) GTEST_SKIP() << "fplll (fplll-tools) not installed";
  MIMORX_SEEDED_GENERATOR(g);
  for (int n : {4, 8, 16, 24}) {
    std::vector<TextBasis> in;
    for (int k = 0; k < 8; ++k) {
      TextBasis b;
      b.n = b.m = n;
      b.b = test::integer_basis(g, n, n, 1 << 12);
      // Shortest vector first, so that the result does not depend on --presort and both tools
      // start from the same basis: from different orders the two reductions take unrelated
      // paths and the ratio of 8 bases spread 0.77..1.33 at n = 24 (the presort's own gain is
      // tested in test_lll.cpp; the default's bytes against fplll's in fplll_compat.py).
      std::vector<int> order(n);
      for (int j = 0; j < n; ++j) order[j] = j;
      auto len2 = [&](int j) {
        double s2 = 0;
        for (int i = 0; i < n; ++i) s2 += b.b[std::size_t(j) * n + i] * b.b[std::size_t(j) * n + i];
        return s2;
      };
      std::stable_sort(order.begin(), order.end(), [&](int a, int c) { return len2(a) < len2(c); });
      std::vector<double> sorted(b.b.size());
      for (int j = 0; j < n; ++j)
        std::copy_n(b.b.begin() + std::size_t(order[j]) * n, n,
                    sorted.begin() + std::size_t(j) * n);
      b.b = sorted;
      in.push_back(b);
    }
    double log_ratio = 0;
    for (const auto& b : in) {
      const auto file = temp_file(to_text({b}));
      const auto ours = parse_all(test::run_cli("lll " + file + " 2>/dev/null").out);
      const auto theirs = parse_all(stdout_of("/usr/bin/fplll -a lll " + file));
      std::remove(file.c_str());
      ASSERT_EQ(ours.size(), 1u);
      ASSERT_EQ(theirs.size(), 1u);
      const auto qo = check_lll(n, n, ours[0].b.data(), {0.99, 0.01, 1e-9});
      const auto qf = check_lll(n, n, theirs[0].b.data(), {0.99, 0.01, 1e-9});
      EXPECT_TRUE(qo.reduced()) << qo.message;
      EXPECT_TRUE(qf.reduced()) << qf.message;
      log_ratio += std::log(qo.orthogonality_defect / qf.orthogonality_defect);
    }
    const double ratio = std::exp(log_ratio / double(in.size()));
    std::printf("n=%d delta=0.99: orthogonality defect mimorx/fplll (geometric mean of 8) %.4f\n",
                n, ratio);
    // The default is fplll's algorithm, so the ratio is 1 wherever float64 rounds the
    // multipliers as fplll does (the bytes are compared in fplll_compat.py). The bounds leave
    // room for a rounding divergence, after which the paths part (other schedules spread to
    // 1.107 at n = 24) and still catch a systematic loss (a wrong delta gives several times
    // fplll's defect).
    EXPECT_LT(ratio, n <= 8 ? 1.10 : 1.25) << "n " << n;
  }
}
