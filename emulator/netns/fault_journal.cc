#include "emulator/netns/fault_journal.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "emulator/netns/lab_state.h"

namespace mrclab::emulator::netns {

std::string FaultJournal::PathOf(const std::string& lab_name) {
  return LabPaths(lab_name).root + "/faults.jsonl";
}

FaultJournal::FaultJournal(const std::string& lab_name) : lab_(lab_name) {
  const LabPaths paths(lab_name);
  if (!std::filesystem::is_directory(paths.root))
    throw FaultError("lab '" + lab_name + "' is not deployed (no " + paths.root + ")", ErrorKind::kInput);
  const std::string path = PathOf(lab_name);
  fd_ = open(path.c_str(), O_RDWR | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw FaultError("cannot open " + path + ": " + std::strerror(errno));
  while (flock(fd_, LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    int saved = errno;
    close(fd_);
    throw FaultError("cannot lock " + path + ": " + std::strerror(saved));
  }
}

FaultJournal::~FaultJournal() {
  if (fd_ >= 0) close(fd_);  // releases the lock
}

void FaultJournal::Append(const nlohmann::json& line) {
  const std::string text = line.dump() + "\n";
  if (write(fd_, text.data(), text.size()) != static_cast<ssize_t>(text.size()))
    throw FaultError("cannot write " + PathOf(lab_) + ": " + std::strerror(errno));
}

namespace {

struct Parsed {
  std::vector<FaultRecord> records;  // by id
  int max_id = 0;                    // over every line, also ones whose action is unreadable
};

Parsed Parse(const std::string& path) {
  Parsed parsed;
  std::map<int, FaultRecord> applied;
  std::set<int> reverted;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    auto doc = nlohmann::json::parse(line, nullptr, false);
    if (doc.is_discarded() || !doc.is_object() || !doc.contains("id") ||
        !doc["id"].is_number_integer())
      continue;  // a torn or foreign line: skip, never guess
    const int id = doc["id"].get<int>();
    parsed.max_id = std::max(parsed.max_id, id);
    const std::string op = doc.value("op", "");
    if (op == "revert") {
      reverted.insert(id);
    } else if (op == "apply") {
      FaultRecord r;
      r.id = id;
      r.applied_at = doc.value("t", 0.0);
      try {
        r.action = FaultAction::FromJson(doc.value("action", nlohmann::json::object()));
      } catch (const FaultError&) {
        continue;
      }
      applied[id] = r;
    }
  }
  for (auto& [id, r] : applied) {
    r.reverted = reverted.count(id) > 0;
    parsed.records.push_back(r);
  }
  return parsed;
}

}  // namespace

int FaultJournal::RecordApply(const FaultAction& action, double now) {
  const int id = Parse(PathOf(lab_)).max_id + 1;
  Append({{"op", "apply"}, {"id", id}, {"action", action.ToJson()}, {"t", now}});
  return id;
}

void FaultJournal::RecordRevert(int id, double now) {
  Append({{"op", "revert"}, {"id", id}, {"t", now}});
}

std::vector<FaultRecord> FaultJournal::Read(const std::string& lab_name) {
  return Parse(PathOf(lab_name)).records;
}

}  // namespace mrclab::emulator::netns
