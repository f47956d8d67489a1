#include "emulator/netns/podman.h"

#include <stdlib.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "emulator/netns/frr_tools.h"
#include "emulator/netns/processes.h"

namespace mrclab::emulator::netns {
namespace {

constexpr const char* kPodman = "/usr/bin/podman";
constexpr const char* kRunRoot = "/run/mrclab-podman";

// Written once per storage root; read by every podman command through CONTAINERS_CONF.
constexpr const char* kContainersConf =
    "# mrclab's own podman settings (emulator/netns/podman.h); the machine's are not used.\n"
    "[containers]\n"
    "default_ulimits = [\"nofile=20000:20000\", \"nproc=32768:32768\"]\n"
    "log_driver = \"k8s-file\"\n"
    "[engine]\n"
    "runtime = \"runc\"\n"
    "cgroup_manager = \"cgroupfs\"\n"
    "events_logger = \"file\"\n";

std::string ConfPath() { return ContainerStorageRoot() + "/containers.conf"; }

void EnsureConf() {
  std::error_code ec;
  std::filesystem::create_directories(ContainerStorageRoot(), ec);
  if (!std::filesystem::exists(ConfPath())) WriteFileWhole(ConfPath(), kContainersConf);
  setenv("CONTAINERS_CONF", ConfPath().c_str(), 1);
}

}  // namespace

std::string ContainerStorageRoot() {
  const char* env = std::getenv("MRCLAB_CONTAINERS_DIR");
  return env && *env ? env : "/var/lib/mrclab/containers";
}

std::string PodmanProblem() {
  if (access(kPodman, X_OK) != 0)
    return std::string(kPodman) + " is missing: container switches need the Debian packages podman and runc (run .ci/setup)";
  if (access("/usr/sbin/runc", X_OK) != 0 && access("/usr/bin/runc", X_OK) != 0)
    return "runc is missing: container switches need the Debian package runc (run .ci/setup)";
  return "";
}

std::vector<std::string> Podman(const std::vector<std::string>& args) {
  EnsureConf();
  const std::string root = ContainerStorageRoot();
  std::vector<std::string> argv = {kPodman,
                                   "--root", root + "/storage",
                                   "--runroot", kRunRoot,
                                   "--tmpdir", std::string(kRunRoot) + "/libpod",
                                   "--storage-driver", "overlay"};
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

int RunPodman(const std::vector<std::string>& args, std::string* output) {
  return RunAndWait(Podman(args), output);
}

std::string ContainerName(const std::string& lab, const std::string& node) { return "mrclab-" + lab + "-" + node; }

bool RemoveContainers(const std::vector<std::string>& names, std::string* why) {
  if (names.empty()) return true;
  std::vector<std::string> args = {"rm", "--force", "--time", "0", "--ignore"};
  args.insert(args.end(), names.begin(), names.end());
  std::string output;
  if (RunPodman(args, &output) == 0) return true;
  if (why) *why = "podman rm: " + output.substr(0, output.find('\n'));
  return false;
}

std::vector<std::string> LabContainers(const std::string& lab) {
  std::string output;
  std::vector<std::string> names;
  if (PodmanProblem() != "" ||
      RunPodman({"ps", "--all", "--filter", std::string("label=") + kLabLabel + "=" + lab, "--format", "{{.Names}}"},
                &output) != 0)
    return names;
  std::istringstream in(output);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) names.push_back(line);
  return names;
}

}  // namespace mrclab::emulator::netns
