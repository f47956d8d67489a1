#include "emulator/netns/vm_initramfs.h"

#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace mrclab::emulator::netns {
namespace {

std::string ReadWhole(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path + " for the VM's initramfs");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// newc: "070701", 13 fields of 8 hex digits, the name with its NUL, data; both padded to 4 bytes.
class CpioWriter {
 public:
  explicit CpioWriter(std::ofstream& out) : out_(out) {}
  void Directory(const std::string& name) { Entry(name, S_IFDIR | 0755, "", 0, 0); }
  void File(const std::string& name, const std::string& data, unsigned mode) { Entry(name, S_IFREG | mode, data, 0, 0); }
  void CharDevice(const std::string& name, unsigned major, unsigned minor) {
    Entry(name, S_IFCHR | 0600, "", major, minor);
  }
  void Trailer() { Entry("TRAILER!!!", 0, "", 0, 0); }

 private:
  void Entry(const std::string& name, unsigned mode, const std::string& data, unsigned rmajor, unsigned rminor) {
    char header[111];
    std::snprintf(header, sizeof header, "070701%08X%08X%08X%08X%08X%08X%08zX%08X%08X%08X%08X%08zX%08X", ino_++, mode,
                  0u, 0u, 1u, 0u, data.size(), 0u, 0u, rmajor, rminor, name.size() + 1, 0u);
    Write(std::string(header, 110) + name + '\0');
    Write(data);
  }
  void Write(const std::string& bytes) {
    out_ << bytes;
    written_ += bytes.size();
    while (written_ % 4) {
      out_.put('\0');
      ++written_;
    }
  }
  std::ofstream& out_;
  unsigned ino_ = 1;
  size_t written_ = 0;
};

}  // namespace

std::string GuestBinaryPath() { return MRCLAB_GUEST_BINARY; }

void WriteInitramfs(const GuestImage& image, const std::string& path) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out) throw std::runtime_error("cannot write " + path);
  CpioWriter cpio(out);
  for (const char* dir : {"dev", "proc", "sys", "newroot", "modules"}) cpio.Directory(dir);
  cpio.CharDevice("dev/console", 5, 1);  // the kernel opens it for /init's stdin, stdout and stderr
  cpio.File("init", ReadWhole(GuestBinaryPath()), 0755);
  std::istringstream modules(ReadWhole(image.dir + "/initrd.modules"));
  std::string order;
  int n = 0;
  for (std::string module; std::getline(modules, module);) {
    if (module.empty()) continue;
    const std::string name = "modules/" + std::to_string(n++) + ".ko";
    cpio.File(name, ReadWhole(image.Rootfs() + module), 0644);
    order += "/" + name + "\n";
  }
  cpio.File("modules.order", order, 0644);
  cpio.Trailer();
  out.close();
  if (!out) throw std::runtime_error("cannot write " + path);
}

}  // namespace mrclab::emulator::netns
