#pragma once
// One exception hierarchy for the whole library. Messages name the argument, the value that
// was given and what is allowed, so that the CLI can print them as its one-line diagnosis.
#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>

namespace mimorx {

// `text` fit for a one-line message: control and non-ASCII bytes (a NUL, raw binary from an
// input file) escaped as \xNN, a newline as \n, and a text longer than a few hundred characters
// (a 100 kB token) cut in the middle.
inline std::string printable(std::string_view text) {
  constexpr std::size_t kMax = 600, kKeep = 280;
  constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : text) {
    if (c >= 0x20 && c < 0x7f) {
      out += char(c);
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  if (out.size() <= kMax) return out;
  return out.substr(0, kKeep) + " [...] " + out.substr(out.size() - kKeep);
}

// Every message is printable(): what() is a C string, which would end at a NUL byte.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what) : std::runtime_error(printable(what)) {}
  explicit Error(const char* what) : Error(std::string(what)) {}
};

// A caller passed a value outside what the function accepts (size, range, NaN, ...).
class InvalidArgument : public Error {
 public:
  using Error::Error;
};

// A valid request this build or this device cannot serve (no CUDA, too many hypotheses...).
class Unsupported : public Error {
 public:
  using Error::Error;
};

// The numbers went wrong: a singular matrix, a precision loss detected by a verification.
class NumericalError : public Error {
 public:
  using Error::Error;
};

// A CUDA runtime call failed; the message holds the call, file:line and CUDA's error string.
class CudaError : public Error {
 public:
  using Error::Error;
};

class OutOfMemory : public Error {
 public:
  using Error::Error;
};

// A real value as a message shows it: shortest form, "0.75" and "1e+20", not "0.750000".
inline std::string value_text(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%g", v);
  return buf;
}

// require(cond, "argument", "what was wrong; what is allowed") throws InvalidArgument.
inline void require(bool cond, const std::string& argument, const std::string& message) {
  if (!cond) throw InvalidArgument(argument + ": " + message);
}

}  // namespace mimorx
