#include "emulator/strict_yaml.h"

#include <filesystem>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>
#include <sstream>

#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/parser.h>

namespace mrclab::emulator {
namespace {

std::string KindOfFile(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode) || S_ISBLK(mode)) return "a device";
  if (S_ISSOCK(mode)) return "a socket";
  return "not a regular file";
}

std::string Line(const YAML::Mark& mark) {
  return mark.is_null() ? "(document)" : "line " + std::to_string(mark.line + 1);
}

// Where each document of a stream starts; nothing else.
class DocumentStarts : public YAML::EventHandler {
 public:
  std::vector<YAML::Mark> marks;
  void OnDocumentStart(const YAML::Mark& mark) override { marks.push_back(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t, const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}
};

// Refuses a stream of more than one document. yaml-cpp 0.7 (Debian 12) never ends LoadAll on
// some malformed streams: at a stray ',' it starts one empty document after another without
// consuming anything, until memory runs out (jbeder/yaml-cpp#1040, fixed upstream by #1319 in
// 2024). Counting with the event parser stops at the second document, and a document that
// starts where the one before it did is the parser stuck on a character it cannot read.
void CheckOneDocument(const std::string& text, const std::string& source) {
  std::istringstream in(text);
  YAML::Parser parser(in);
  DocumentStarts starts;
  while (starts.marks.size() < 2 && parser.HandleNextDocument(starts)) {
  }
  if (starts.marks.size() < 2) return;
  const YAML::Mark& first = starts.marks[0];
  const YAML::Mark& second = starts.marks[1];
  if (second.pos == first.pos) {
    const std::string at = second.pos >= 0 && static_cast<size_t>(second.pos) < text.size()
                               ? std::string(" '") + text[second.pos] + "'"
                               : std::string();
    throw LabError(source, Line(second), "YAML syntax error: unexpected character" + at);
  }
  throw LabError(source, "(document)", "holds more than one YAML document (separated by ---); expected one");
}

// Duplicate keys and depth, with the field path of what is wrong ("job.collectives[0]").
void Check(const YAML::Node& node, const std::string& path, int depth, const std::string& source) {
  if (!node.IsMap() && !node.IsSequence()) return;
  const std::string where = path.empty() ? "(document)" : path;
  if (depth > kMaxYamlDepth)
    throw LabError(source, where, "nested more than " + std::to_string(kMaxYamlDepth) + " levels deep");
  if (node.IsSequence()) {
    for (size_t i = 0; i < node.size(); ++i)
      Check(node[i], path + "[" + std::to_string(i) + "]", depth + 1, source);
    return;
  }
  std::set<std::string> seen;
  for (const auto& kv : node) {
    if (!kv.first.IsScalar()) throw LabError(source, where, "keys must be plain names, not lists or mappings");
    const std::string key = kv.first.Scalar();
    const std::string field = path.empty() ? key : path + "." + key;
    if (!seen.insert(key).second)
      throw LabError(source, field, "duplicate key (given again at " + Line(kv.first.Mark()) + ")");
    Check(kv.second, field, depth + 1, source);
  }
}

}  // namespace

bool PathExists(const std::string& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}

bool IsRegularFile(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_regular_file(path, ec);
}

std::string ReadInputFile(const std::string& path) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then refuses it.
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) throw LabError(path, "(file)", std::string("cannot be read: ") + std::strerror(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    const std::string kind = KindOfFile(st.st_mode);
    close(fd);
    throw LabError(path, "(file)", "is " + kind + ", expected a regular file");
  }
  auto too_big = [&] {
    close(fd);
    return LabError(path, "(file)", "larger than " + std::to_string(kMaxInputFileBytes >> 10) +
                                        " KiB; lab and scenario files are a few KiB");
  };
  if (static_cast<uint64_t>(st.st_size) > kMaxInputFileBytes) throw too_big();
  std::string text;
  char buf[65536];
  for (;;) {
    const ssize_t n = read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      close(fd);
      throw LabError(path, "(file)", std::string("cannot be read: ") + std::strerror(err));
    }
    if (n == 0) break;
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > kMaxInputFileBytes) throw too_big();  // the file grew while read
  }
  close(fd);
  return text;
}

YAML::Node LoadStrictYaml(const std::string& text, const std::string& source) {
  YAML::Node document;
  try {
    CheckOneDocument(text, source);
    document = YAML::Load(text);
  } catch (const YAML::DeepRecursion& e) {
    throw LabError(source, Line(e.mark), "nested more than " + std::to_string(kMaxYamlDepth) + " levels deep");
  } catch (const YAML::ParserException& e) {
    throw LabError(source, Line(e.mark), "YAML syntax error: " + e.msg);
  } catch (const YAML::Exception& e) {
    throw LabError(source, "(document)", std::string("YAML error: ") + e.what());
  }
  Check(document, "", 0, source);
  return document;
}

}  // namespace mrclab::emulator
