#include "emulator/netns/lab_state.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "emulator/errors.h"

namespace mrclab::emulator::netns {

std::string StateRoot() {
  const char* env = std::getenv("MRCLAB_STATE_DIR");
  return env && *env ? env : "/run/mrclab";
}

LabPaths::LabPaths(const std::string& lab_name)
    : root(StateRoot() + "/" + lab_name), lab_json(root + "/lab.json"), journal(root + "/journal") {}

Journal::Journal(const std::string& path) {
  fd_ = open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw std::system_error(errno, std::generic_category(), "open " + path);
}

Journal::~Journal() {
  if (fd_ >= 0) close(fd_);
}

void Journal::Append(const std::string& line) {
  const std::string text = line + "\n";
  // One write() per line with O_APPEND: a line is never torn, even if we die right after.
  if (write(fd_, text.data(), text.size()) != static_cast<ssize_t>(text.size()))
    throw std::system_error(errno, std::generic_category(), "write journal");
}

void Journal::RecordNetns(const std::string& netns) { Append("netns " + netns); }

void Journal::RecordProcess(pid_t pid, const std::string& netns, const std::string& what) {
  Append("process " + std::to_string(pid) + " " + netns + " " + what);
}

void Journal::RecordContainer(const std::string& name) { Append("container " + name); }

std::vector<JournalEntry> Journal::Read(const std::string& path) {
  std::vector<JournalEntry> entries;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    JournalEntry e;
    fields >> e.kind;
    if (e.kind == "netns") {
      fields >> e.netns;
    } else if (e.kind == "process") {
      fields >> e.pid >> e.netns >> e.what;
    } else if (e.kind == "container") {
      fields >> e.what;
    } else {
      continue;  // a torn or unknown line: skip, never guess
    }
    if (!fields.fail()) entries.push_back(e);
  }
  return entries;
}

std::vector<std::string> ListLabs() {
  std::vector<std::string> labs;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(StateRoot(), ec))
    if (entry.is_directory()) labs.push_back(entry.path().filename());
  std::sort(labs.begin(), labs.end());
  return labs;
}

nlohmann::json ReadLabJson(const std::string& lab_name) {
  LabPaths paths(lab_name);
  std::ifstream in(paths.lab_json);
  if (!in) throw InputError("lab '" + lab_name + "' is not deployed (no " + paths.lab_json + ")");
  return nlohmann::json::parse(in);
}

void WriteLabJson(const std::string& lab_name, const nlohmann::json& doc) {
  LabPaths paths(lab_name);
  const std::string tmp = paths.lab_json + ".tmp";
  {
    std::ofstream out(tmp);
    out << doc.dump(2) << "\n";
    if (!out) throw std::runtime_error("cannot write " + tmp);
  }
  std::filesystem::rename(tmp, paths.lab_json);
}

}  // namespace mrclab::emulator::netns

namespace mrclab::emulator::netns {

ResolvedLab LoadDeployedLab(const std::string& lab_name) {
  LabPaths paths(lab_name);
  std::ifstream in(paths.root + "/lab.yaml");
  if (!in) throw InputError("lab '" + lab_name + "' is not deployed (see: mrclab list)");
  std::stringstream text;
  text << in.rdbuf();
  // Its files (frr_config) were read at deploy; named as they were, from the folder it came from.
  ParseOptions options{.files_dir = "", .check_files = false};
  try {
    options.files_dir = ReadLabJson(lab_name).value("files_dir", "");
  } catch (const std::exception&) {
    // No lab.json (a crash during deploy): the names do not matter to what reads the lab then.
  }
  return Resolve(ParseLabText(text.str(), paths.root + "/lab.yaml", options));
}

void SaveLabText(const std::string& lab_name, const std::string& yaml_text) {
  LabPaths paths(lab_name);
  std::ofstream out(paths.root + "/lab.yaml");
  out << yaml_text;
  if (!out) throw std::runtime_error("cannot write " + paths.root + "/lab.yaml");
}

}  // namespace mrclab::emulator::netns
