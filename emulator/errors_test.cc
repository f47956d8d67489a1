// The one mapping from errors to exit statuses: input errors 2, failed operations 1.
#include <gtest/gtest.h>

#include <system_error>

#include "emulator/errors.h"
#include "emulator/fault.h"
#include "emulator/lab_spec.h"

namespace mrclab::emulator {
namespace {

TEST(ExitStatusOf, InputErrorsAreTwoFailedOperationsOne) {
  EXPECT_EQ(ExitStatusOf(LabError("lab.yaml", "clos.planes", "must be at least 1")), kExitInputError);
  EXPECT_EQ(ExitStatusOf(InputError("lab 'x' is not deployed")), kExitInputError);
  EXPECT_EQ(ExitStatusOf(std::invalid_argument("--rate: bad")), kExitInputError);
  EXPECT_EQ(ExitStatusOf(FaultError("unknown node", ErrorKind::kInput)), kExitInputError);
  EXPECT_EQ(ExitStatusOf(FaultError("nft refused the rule")), kExitFailed);
  EXPECT_EQ(ExitStatusOf(std::runtime_error("zebra exited")), kExitFailed);
  EXPECT_EQ(ExitStatusOf(std::system_error(EIO, std::generic_category(), "write")), kExitFailed);
}

TEST(ExitStatusOf, TheStatusesAreTheDocumentedOnes) {
  // README's exit-status table; scripts depend on these numbers.
  EXPECT_EQ(kExitOk, 0);
  EXPECT_EQ(kExitFailed, 1);
  EXPECT_EQ(kExitInputError, 2);
  EXPECT_EQ(kExitInconclusive, 3);
  EXPECT_EQ(kExitInterrupted, 130);
}

}  // namespace
}  // namespace mrclab::emulator
