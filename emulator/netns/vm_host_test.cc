// VM hosts' building blocks on the real thing: the guest image from Debian's archive, qemu
// (TCG here), the initramfs and guest agent, taps in a namespace, and the kernel's RoCEv2
// (rdma_rxe) between two VMs whose traffic the host forwards. Needs root, qemu and the archive.
#include <signal.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <thread>

#include <gtest/gtest.h>

#include "emulator/netns/namespaces.h"
#include "emulator/netns/processes.h"
#include "emulator/netns/vm_guest_agent.h"
#include "emulator/netns/vm_initramfs.h"
#include "emulator/netns/vm_qemu.h"

namespace mrclab::emulator::netns {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using std::chrono::seconds;

constexpr const char* kNetns = "mrclab-vmtest";

class VmHostTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(geteuid(), 0) << "VM hosts need root";
    image_ = BuildGuestImage({}, [](const std::string& stage) { std::fprintf(stderr, "  %s\n", stage.c_str()); });
    VerifyGuestImage(image_);
    char dir[] = "/tmp/mrclab-vmtest-XXXXXX";
    ASSERT_NE(mkdtemp(dir), nullptr);
    dir_ = dir;
    initrd_ = dir_ + "/initrd.cpio";
    WriteInitramfs(image_, initrd_);
    std::string out;
    RunAndWait({"ip", "netns", "del", kNetns}, &out);
    ASSERT_EQ(RunAndWait({"ip", "netns", "add", kNetns}, &out), 0) << out;
    ASSERT_EQ(RunAndWait({"ip", "netns", "exec", kNetns, "sysctl", "-qw", "net.ipv6.conf.all.forwarding=1"}, &out), 0) << out;
    netns_ = OpenNetns(kNetns);
  }

  void TearDown() override {
    for (pid_t pid : vms_) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
    std::string out;
    RunAndWait({"ip", "netns", "del", kNetns}, &out);
    if (!dir_.empty()) fs::remove_all(dir_);
  }

  // A VM with one NIC on the switch namespace's tap `tap`.
  GuestAgent Boot(const std::string& name, const std::string& tap, const std::string& mac) {
    const std::string vm_dir = dir_ + "/" + name;
    fs::create_directories(vm_dir);
    Fd tap_fd = OpenTap(netns_.get(), tap, 1500);
    VmLaunch vm{name, 256, 1, vm_dir, initrd_, {{tap_fd.get(), mac}}};
    Fd self = OpenPath("/proc/self/ns/net");
    vms_.push_back(StartVm(image_, vm, self.get(), -1));
    return GuestAgent(vm_dir);
  }

  GuestImage image_;
  std::string dir_, initrd_;
  Fd netns_;
  std::vector<pid_t> vms_;
};

std::string Sh(const GuestAgent& agent, const std::string& script, int expect = 0) {
  const GuestResult r = agent.Exec({"sh", "-c", script}, std::chrono::seconds(60));
  EXPECT_EQ(r.status, expect) << script << "\n" << r.out << r.err;
  return r.out;
}

TEST_F(VmHostTest, TwoVmsBootRunCommandsAndTalkRdmaThroughTheHost) {
  const auto start = Clock::now();
  GuestAgent a = Boot("vma", "sw0", "52:54:00:00:00:01");
  GuestAgent b = Boot("vmb", "sw1", "52:54:00:00:00:02");
  const double uptime_a = a.WaitReady(Clock::now() + seconds(120));
  b.WaitReady(Clock::now() + seconds(120));
  std::printf("two VMs (%s) answering after %.1f s; guest uptime %.1f s\n", VmAccel().c_str(),
              std::chrono::duration<double>(Clock::now() - start).count(), uptime_a);

  // The agent: exit status, both streams, input, a missing program, the timeout.
  GuestResult r = a.Exec({"sh", "-c", "echo out; echo err >&2; cat; exit 3"}, seconds(30), "in\n");
  EXPECT_EQ(r.status, 3);
  EXPECT_EQ(r.out, "out\nin\n");
  EXPECT_EQ(r.err, "err\n");
  EXPECT_THROW(a.Exec({"no-such-program"}, seconds(30)), std::runtime_error);
  r = a.Exec({"sleep", "30"}, std::chrono::milliseconds(500));
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.status, 128 + SIGKILL);
  EXPECT_EQ(Sh(a, "hostname"), "vma\n");

  // Calls at once each get a port: a command waiting for another's file sees it (one port
  // would serve the second call only after the first, which would time out instead).
  GuestResult waiter;
  std::thread wait_for_go([&] {
    waiter = a.Exec({"sh", "-c", "while [ ! -e /tmp/go ]; do sleep 0.05; done; echo seen"}, seconds(20));
  });
  for (const auto until = Clock::now() + seconds(30);
       Clock::now() < until && Sh(a, "ps -eo args | grep -c '^sh -c while' || true") == "0\n";)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(Sh(a, "touch /tmp/go && echo made"), "made\n");
  wait_for_go.join();
  EXPECT_FALSE(waiter.timed_out);
  EXPECT_EQ(waiter.out, "seen\n");

  // A caller that went away before its answer (killed, or gave up): the answer has no reader,
  // and the agent must not wait for one (it would stop answering everyone).
  {
    const int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un sa{};
    sa.sun_family = AF_UNIX;
    std::snprintf(sa.sun_path, sizeof sa.sun_path, "%s", AgentSocketPath(dir_ + "/vma", kAgentPorts - 1).c_str());
    ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa), 0);
    const std::string request = R"({"id": 1, "op": "exec", "argv": ["sh", "-c", "sleep 1 # abandoned"], "timeout_s": 30})"
                                "\n";
    ASSERT_EQ(write(fd, request.data(), request.size()), static_cast<ssize_t>(request.size()));
    close(fd);
  }
  for (const auto until = Clock::now() + seconds(30);
       Clock::now() < until && Sh(a, "pgrep -f 'abandone[d]' >/dev/null && echo running || echo gone") != "gone\n";)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(Sh(a, "echo alive"), "alive\n");

  // The switch namespace routes between the two taps; each VM has an address and a route.
  std::string out;
  ASSERT_EQ(RunAndWait({"ip", "-n", kNetns, "addr", "add", "fd00:1::1/64", "dev", "sw0", "nodad"}, &out), 0) << out;
  ASSERT_EQ(RunAndWait({"ip", "-n", kNetns, "addr", "add", "fd00:2::1/64", "dev", "sw1", "nodad"}, &out), 0) << out;
  for (const char* dev : {"sw0", "sw1"})
    ASSERT_EQ(RunAndWait({"ip", "-n", kNetns, "link", "set", dev, "up"}, &out), 0) << out;
  const std::string setup =
      "set -e; dev=$(basename $(dirname $(grep -l %s /sys/class/net/*/address))); ip link set $dev name port0;"
      " sysctl -qw net.ipv6.conf.port0.accept_dad=0; ip link set port0 up; ip addr add %s dev port0 nodad;"
      " ip -6 route add default via %s; modprobe rdma_rxe; rdma link add rxe0 type rxe netdev port0";
  char script[512];
  std::snprintf(script, sizeof script, setup.c_str(), "52:54:00:00:00:01", "fd00:1::2/64", "fd00:1::1");
  Sh(a, script);
  std::snprintf(script, sizeof script, setup.c_str(), "52:54:00:00:00:02", "fd00:2::2/64", "fd00:2::1");
  Sh(b, script);
  Sh(a, "for i in $(seq 50); do ping -c1 -W1 fd00:2::2 >/dev/null && exit 0; done; exit 1");
  // rxe gives the port RoCEv2 GIDs of its addresses.
  // (Unused entries of the GID table read as EINVAL.)
  Sh(a, "cat /sys/class/infiniband/rxe0/ports/1/gid_attrs/types/* 2>/dev/null | grep -q 'RoCE v2'");
  Sh(a, "grep -q fd00:0001:0000:0000:0000:0000:0000:0002 /sys/class/infiniband/rxe0/ports/1/gids/*");

  // An RC connection (rdma_cm) across the host's forwarding: rping's server on b, client on a.
  GuestResult server;
  std::thread t([&] { server = b.Exec({"rping", "-s", "-a", "fd00:2::2", "-C", "5", "-v"}, seconds(60)); });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  GuestResult client;
  for (int attempt = 0; attempt < 50; ++attempt) {  // until the server listens
    client = a.Exec({"rping", "-c", "-a", "fd00:2::2", "-C", "5", "-v"}, seconds(60));
    if (client.status == 0) break;
  }
  t.join();
  EXPECT_EQ(client.status, 0) << client.out << client.err;
  EXPECT_EQ(server.status, 0) << server.out << server.err;
  EXPECT_NE(client.out.find("ping data"), std::string::npos) << client.out;

  // A killed VM leaves no tap behind.
  kill(vms_[0], SIGKILL);
  waitpid(vms_[0], nullptr, 0);
  vms_.erase(vms_.begin());
  EXPECT_NE(RunAndWait({"ip", "-n", kNetns, "link", "show", "sw0"}, &out), 0) << out;
}

}  // namespace
}  // namespace mrclab::emulator::netns
