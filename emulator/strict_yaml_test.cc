#include "emulator/strict_yaml.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace mrclab::emulator {
namespace {

namespace fs = std::filesystem;

// "FILE: FIELD: REASON" of what the reader throws, or "" when it reads fine.
std::string ReadError(const std::string& path) {
  try {
    LoadStrictYaml(ReadInputFile(path), path);
  } catch (const LabError& e) {
    return e.what();
  }
  return "";
}

std::string YamlError(const std::string& text) {
  try {
    LoadStrictYaml(text, "t.yaml");
  } catch (const LabError& e) {
    return e.what();
  }
  return "";
}

class TempDir {
 public:
  TempDir() : path_(fs::temp_directory_path() / ("strict-yaml-" + std::to_string(getpid()))) {
    fs::create_directories(path_);
  }
  ~TempDir() { fs::remove_all(path_); }
  std::string File(const std::string& name, const std::string& text) const {
    std::ofstream(path_ / name) << text;
    return (path_ / name).string();
  }
  std::string Path(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
};

TEST(ReadInputFile, OnlyRegularFilesOfBoundedSize) {
  TempDir dir;
  EXPECT_EQ(ReadError(dir.File("ok.yaml", "name: t\n")), "");
  EXPECT_EQ(ReadError("/dev/zero"), "/dev/zero: (file): is a device, expected a regular file");
  EXPECT_EQ(ReadError(dir.Path("")), dir.Path("") + ": (file): is a directory, expected a regular file");
  ASSERT_EQ(mkfifo(dir.Path("fifo").c_str(), 0600), 0);
  // A FIFO with no writer is refused at once instead of blocking.
  EXPECT_EQ(ReadError(dir.Path("fifo")), dir.Path("fifo") + ": (file): is a FIFO, expected a regular file");
  const std::string big = dir.File("big.yaml", "# " + std::string(kMaxInputFileBytes, 'x') + "\n");
  EXPECT_NE(ReadError(big).find(big + ": (file): larger than 1024 KiB"), std::string::npos) << ReadError(big);
  EXPECT_NE(ReadError(dir.Path("missing.yaml")).find(": (file): cannot be read: No such file"), std::string::npos);
}

TEST(LoadStrictYaml, OneDocumentNoDuplicateKeysBoundedDepth) {
  EXPECT_EQ(YamlError("a: 1\nb: [1, 2]\n"), "");
  EXPECT_EQ(YamlError("a: 1\n---\nb: 2\n"),
            "t.yaml: (document): holds more than one YAML document (separated by ---); expected one");
  // yaml-cpp 0.7's LoadAll never ends on a stray ',' (allocating without bound): refused at once.
  EXPECT_EQ(YamlError(",x\nname: a\n"), "t.yaml: line 1: YAML syntax error: unexpected character ','");
  EXPECT_EQ(YamlError("faults: []\nname: x\nfaults: [{at: 1s}]\n"), "t.yaml: faults: duplicate key (given again at line 3)");
  EXPECT_EQ(YamlError("job:\n  collectives:\n    - {kind: a, kind: b}\n"),
            "t.yaml: job.collectives[0].kind: duplicate key (given again at line 3)");
  EXPECT_EQ(YamlError("[a, b]: 1\n"), "t.yaml: (document): keys must be plain names, not lists or mappings");
  EXPECT_NE(YamlError(std::string(40, '[') + std::string(40, ']')).find("nested more than 32 levels deep"),
            std::string::npos);
  EXPECT_NE(YamlError(std::string(100000, '[')).find("t.yaml: line 1: nested more than"), std::string::npos)
      << YamlError(std::string(100000, '['));
  EXPECT_NE(YamlError("a: [1\n").find("t.yaml: line 2: YAML syntax error"), std::string::npos);
}

}  // namespace
}  // namespace mrclab::emulator
