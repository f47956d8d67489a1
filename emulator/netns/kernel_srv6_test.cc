#include "emulator/netns/kernel_srv6.h"

#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

namespace mrclab::emulator::netns {
namespace {

ino_t OwnNetns() {
  struct stat st{};
  stat("/proc/thread-self/ns/net", &st);
  return st.st_ino;
}

size_t NamedNetns() {
  if (!std::filesystem::exists("/run/netns")) return 0;
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/run/netns")) ++n;
  return n;
}

// The probe deploy trusts and the one ctest skips the lab suites by (tests/skip_without_srv6.sh,
// with iproute2) must agree; the probe runs in a namespace of its own and leaves nothing.
TEST(KernelSrv6, AgreesWithIproute2AndLeavesNothing) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root (network namespaces)";
  const ino_t before = OwnNetns();
  const size_t named = NamedNetns();
  const std::optional<std::string> missing = KernelSrv6Missing();
  EXPECT_EQ(OwnNetns(), before);
  EXPECT_EQ(NamedNetns(), named);
  const std::string script = std::string(MRCLAB_SOURCE_DIR) + "/tests/skip_without_srv6.sh true 2>/dev/null";
  const int status = std::system(script.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), missing ? 77 : 0) << (missing ? *missing : "the kernel forwards SRv6 uSIDs");
  if (missing) EXPECT_NE(missing->find("not supported"), std::string::npos) << *missing;
  EXPECT_EQ(KernelSrv6Missing(), missing);  // asked once per process
}

}  // namespace
}  // namespace mrclab::emulator::netns
