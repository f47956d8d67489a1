#include "emulator/netns/frr_tools.h"

#include <filesystem>
#include <fstream>
#include <stdexcept>

namespace mrclab::emulator::netns {

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
