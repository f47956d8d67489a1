// The configuration script of a VM host (VmHostScript): the plan's values as sh words, even a
// lab's sysctl value with quotes and shell syntax in it.
#include "emulator/netns/vm_hosts.h"

#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "emulator/lab_spec.h"
#include "emulator/netns/processes.h"

namespace mrclab::emulator::netns {
namespace {

TEST(VmHostScript, ASysctlValueIsOneWordWhateverItHolds) {
  const ResolvedLab lab = Resolve(ParseLabText(
      "name: q\nclos: {planes: 1, spines_per_plane: 1, leaves_per_plane: 1, hosts: 2, hosts_per_leaf: 2}\n"
      "runtimes: [{match: {node: host0}, runtime: vm}]\n"
      "sysctls: [{match: {node: host0}, set: {net.ipv6.route.gc_interval: \"1'; echo injected; echo '$(id) \\\" "
      "`x`\"}}]\n",
      "q.yaml"));
  const std::string script = VmHostScript(lab, *lab.FindNode("host0"));
  std::istringstream lines(script);
  std::string line, setting;
  while (std::getline(lines, line))
    if (line.find("gc_interval") != std::string::npos) setting = line;
  ASSERT_EQ(setting.rfind("sysctl -qw ", 0), 0u) << script;
  // The same words with printf instead of sysctl: exactly the key and the value, nothing run.
  std::string out;
  ASSERT_EQ(RunAndWait({"sh", "-c", "printf %s " + setting.substr(std::string("sysctl -qw ").size())}, &out), 0);
  EXPECT_EQ(out, "net.ipv6.route.gc_interval=1'; echo injected; echo '$(id) \" `x`");
}

}  // namespace
}  // namespace mrclab::emulator::netns
