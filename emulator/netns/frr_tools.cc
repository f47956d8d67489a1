#include "emulator/netns/frr_tools.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "emulator/netns/podman.h"

namespace mrclab::emulator::netns {

std::string FrrDir() {
  const char* env = std::getenv("MRCLAB_FRR_DIR");
  return env && *env ? env : "/usr/lib/frr";
}

std::vector<std::string> FrrTools::Command(const std::string& program, const std::vector<std::string>& args) const {
  std::vector<std::string> argv = prefix;
  argv.push_back(program);
  argv.insert(argv.end(), args.begin(), args.end());
  return argv;
}

FrrTools ToolsOf(const std::string& lab_name, const ResolvedNode& sw) {
  if (!sw.image) return {{}, FrrDir(), false};
  return {Podman({"exec", ContainerName(lab_name, sw.name)}), "/usr/lib/frr", true};
}

void WriteVtyshConf(const std::string& dir) { WriteFileWhole(dir + "/vtysh.conf", "service integrated-vtysh-config\n"); }

void WriteFileWhole(const std::string& path, const std::string& text) {
  {
    std::ofstream out(path + ".tmp", std::ios::trunc);
    out << text;
    out.flush();
    if (!out) throw std::runtime_error("cannot write " + path + ".tmp");
  }
  std::filesystem::rename(path + ".tmp", path);
}

}  // namespace mrclab::emulator::netns
