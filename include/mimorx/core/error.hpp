#pragma once
// One exception hierarchy for the whole library. Messages name the argument, the value that
// was given and what is allowed, so that the CLI can print them as its one-line diagnosis.
#include <stdexcept>
#include <string>

namespace mimorx {

class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
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

// require(cond, "argument", "what was wrong; what is allowed") throws InvalidArgument.
inline void require(bool cond, const std::string& argument, const std::string& message) {
  if (!cond) throw InvalidArgument(argument + ": " + message);
}

}  // namespace mimorx
