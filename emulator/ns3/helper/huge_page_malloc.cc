#include "emulator/ns3/helper/huge_page_malloc.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace mrclab::emulator::sim {
namespace {

constexpr char kTunable[] = "glibc.malloc.hugetlb=1";
// Set with it: a heap that is never given back (no trim) and grows 64 MiB at a time (the
// header says what it was measured to buy).
constexpr char kKeepHeap[] = "glibc.malloc.trim_threshold=4294967296:glibc.malloc.top_pad=67108864";

bool KernelHasHugePages() {
  std::ifstream mode("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string text;
  std::getline(mode, text);
  return !text.empty() && text.find("[never]") == std::string::npos;
}

// This process's arguments, as the kernel has them.
std::vector<std::string> OwnArguments() {
  std::ifstream file("/proc/self/cmdline", std::ios::binary);
  const std::string text((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  std::vector<std::string> args;
  for (size_t at = 0; at < text.size();) {
    const size_t end = text.find('\0', at);
    args.push_back(text.substr(at, end - at));
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return args;
}

}  // namespace

bool HugePageMallocInEffect() {
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  return tunables && std::string(tunables).find(kTunable) != std::string::npos;
}

void ReexecWithHugePageMalloc() {
  const char* tunables = std::getenv("GLIBC_TUNABLES");
  const std::string current = tunables ? tunables : "";
  if (current.find("glibc.malloc.hugetlb=") != std::string::npos) return;
  if (const char* opt = std::getenv("MRCLAB_HUGE_PAGES"); opt && std::string(opt) == "0") return;
  if (!KernelHasHugePages()) return;
  std::vector<std::string> args = OwnArguments();
  if (args.empty()) return;
  const std::string ours = std::string(kTunable) + ":" + kKeepHeap;
  const std::string value = current.empty() ? ours : current + ":" + ours;
  if (setenv("GLIBC_TUNABLES", value.c_str(), 1) != 0) return;
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  execv("/proc/self/exe", argv.data());
  // The exec failed: go on as before, without huge pages.
  if (tunables) setenv("GLIBC_TUNABLES", tunables, 1); else unsetenv("GLIBC_TUNABLES");
}

}  // namespace mrclab::emulator::sim
