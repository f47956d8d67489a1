// mrclab's error taxonomy and the exit status of every command, decided here only.
//
//   exception thrown ───► ExitStatusOf ───► exit status
//   Error{kInput}, std::invalid_argument, std::out_of_range ........ 2  bad input or environment
//   Error{kOperation}, anything else .............................. 1  tried, and it failed
//   (netns::Interrupted, caught before: 130; a drill's own verdict: 0, 1 or 3)
//
// Input errors are found before anything changes: a file, field or option that is wrong, an
// unknown node or lab, a lab too large for the machine, FRR not installed, not root. Operation
// errors happen while doing what was asked: a lab not ready before its deadline, a daemon that
// died, a fault the kernel refused.
#pragma once

#include <exception>
#include <stdexcept>
#include <string>

namespace mrclab::emulator {

enum ExitStatus : int {
  kExitOk = 0,
  kExitFailed = 1,         // the operation failed, or a drill's SLO failed
  kExitInputError = 2,     // bad input or environment; nothing was changed
  kExitInconclusive = 3,   // a drill whose results cannot judge the fabric (README)
  kExitInterrupted = 130,  // Ctrl-C or SIGTERM; what was made is rolled back
};

enum class ErrorKind { kInput, kOperation };

class Error : public std::runtime_error {
 public:
  Error(ErrorKind kind, const std::string& what) : std::runtime_error(what), kind_(kind) {}
  ErrorKind kind() const { return kind_; }

 private:
  ErrorKind kind_;
};

// An input error that is not about one file's field (those are LabError).
class InputError : public Error {
 public:
  explicit InputError(const std::string& what) : Error(ErrorKind::kInput, what) {}
};

inline int ExitStatusOf(const std::exception& e) {
  if (const auto* error = dynamic_cast<const Error*>(&e))
    return error->kind() == ErrorKind::kInput ? kExitInputError : kExitFailed;
  if (dynamic_cast<const std::invalid_argument*>(&e) || dynamic_cast<const std::out_of_range*>(&e))
    return kExitInputError;
  return kExitFailed;
}

}  // namespace mrclab::emulator
