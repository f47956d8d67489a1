// A real Prometheus server (Debian's /usr/bin/prometheus) scrapes DrillMetrics and answers
// queries over its HTTP API. The server is started by this test, known by its PID, and stopped
// (SIGTERM, then SIGKILL) with its temporary directory removed, whatever the outcome.
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "harness/telemetry/metrics_exporter.h"
#include "harness/telemetry/test_http.h"

namespace mrclab::harness {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using testing::HttpGet;

constexpr const char* kPrometheus = "/usr/bin/prometheus";

class TempDir {
 public:
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "mrclab-prometheus-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

uint16_t FreeLoopbackPort() {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in sa{};
  sa.sin_family = AF_INET;
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(sa);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&sa), sizeof(sa)) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0)
    throw std::runtime_error("no free port");
  close(fd);
  return ntohs(sa.sin_port);
}

std::string ReadText(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// One Prometheus server process, scraping `target` every second.
class PrometheusServer {
 public:
  PrometheusServer(const fs::path& dir, const std::string& target) : dir_(dir) {
    std::ofstream(dir / "prometheus.yml") << "global:\n"
                                             "  scrape_interval: 1s\n"
                                             "  evaluation_interval: 1s\n"
                                             "scrape_configs:\n"
                                             "  - job_name: mrclab\n"
                                             "    static_configs:\n"
                                             "      - targets: ['" << target << "']\n";
    // The port is free when picked; should another process take it first, start again.
    for (int attempt = 0; attempt < 3; ++attempt) {
      port_ = FreeLoopbackPort();
      Spawn();
      if (WaitReady()) return;
      const std::string log = ReadText(dir_ / "prometheus.log");
      Stop();
      if (log.find("address already in use") == std::string::npos)
        throw std::runtime_error("prometheus did not become ready; its log:\n" + log);
    }
    throw std::runtime_error("prometheus found no free port");
  }
  ~PrometheusServer() { Stop(); }

  uint16_t port() const { return port_; }
  pid_t pid() const { return pid_; }
  std::string log() const { return ReadText(dir_ / "prometheus.log"); }

  // SIGTERM, up to 10 s for a clean exit, then SIGKILL. Only ever our own child, by PID.
  void Stop() {
    if (pid_ <= 0) return;
    kill(pid_, SIGTERM);
    const auto deadline = Clock::now() + std::chrono::seconds(10);
    while (waitpid(pid_, nullptr, WNOHANG) == 0) {
      if (Clock::now() > deadline) {
        kill(pid_, SIGKILL);
        waitpid(pid_, nullptr, 0);
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    pid_ = -1;
  }

  // The value of an instant query with one result, or nullopt (no result yet, not reachable).
  std::optional<double> Query(const std::string& promql) const {
    try {
      auto r = HttpGet(port_, "/api/v1/query?query=" + testing::UrlEncode(promql));
      if (r.status != 200) return std::nullopt;
      auto doc = nlohmann::json::parse(r.body);
      const auto& result = doc.at("data").at("result");
      if (doc.at("status") != "success" || result.size() != 1) return std::nullopt;
      return std::stod(result[0].at("value").at(1).get<std::string>());
    } catch (const std::exception&) {
      return std::nullopt;
    }
  }

 private:
  void Spawn() {
    const std::string config = "--config.file=" + (dir_ / "prometheus.yml").string();
    const std::string storage = "--storage.tsdb.path=" + (dir_ / "data").string();
    const std::string listen = "--web.listen-address=127.0.0.1:" + std::to_string(port_);
    const std::string log = (dir_ / "prometheus.log").string();
    // Prometheus 2.42 passes targets on to scraping only every 5 s (not configurable): the
    // first scrape comes ~6 s after start.
    std::vector<const char*> argv = {kPrometheus, config.c_str(), storage.c_str(), listen.c_str(),
                                     "--log.level=warn", nullptr};
    const pid_t parent = getpid();
    pid_ = fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {  // only async-signal-safe calls until exec
      prctl(PR_SET_PDEATHSIG, SIGTERM);  // the test dies: Prometheus goes too
      if (getppid() != parent) _exit(127);
      int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
      if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
      }
      execv(kPrometheus, const_cast<char* const*>(argv.data()));
      _exit(127);
    }
  }

  // Ready when /-/ready answers 200; false if the process exits or 30 s pass.
  bool WaitReady() {
    const auto deadline = Clock::now() + std::chrono::seconds(30);
    while (Clock::now() < deadline) {
      int status;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return false;
      }
      try {
        if (HttpGet(port_, "/-/ready", 1000).status == 200) return true;
      } catch (const std::exception&) {
        // not listening yet
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return false;
  }

  fs::path dir_;
  uint16_t port_ = 0;
  pid_t pid_ = -1;
};

// Polls `query` until it has the value `want`; fails with the last answer after the timeout.
void ExpectEventually(const PrometheusServer& prometheus, const std::string& query, double want,
                      std::chrono::seconds timeout = std::chrono::seconds(30)) {
  const auto deadline = Clock::now() + timeout;
  std::optional<double> got;
  while (Clock::now() < deadline) {
    got = prometheus.Query(query);
    if (got == want) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ADD_FAILURE() << query << ": wanted " << want << ", got "
                << (got ? std::to_string(*got) : "no result") << " after " << timeout.count()
                << " s; Prometheus log:\n"
                << prometheus.log();
}

TEST(PrometheusScrape, RealServerScrapesDrillMetrics) {
  ASSERT_EQ(access(kPrometheus, X_OK), 0)
      << kPrometheus << " is missing: run `bash .ci/setup` (it installs the Debian package "
                        "prometheus)";
  DrillMetrics metrics({"127.0.0.1:0"});
  metrics.StepsCompleted("mrc", 7);
  metrics.JobState("mrc", "running");

  TempDir dir;
  pid_t pid;
  {
    PrometheusServer prometheus(dir.path(), "127.0.0.1:" + std::to_string(metrics.port()));
    pid = prometheus.pid();
    ExpectEventually(prometheus, R"(mrclab_steps_completed_total{transport="mrc"})", 7);
    ExpectEventually(prometheus, R"(up{job="mrclab"})", 1);
    ExpectEventually(prometheus, R"(mrclab_job_state{transport="mrc",state="running"})", 1);
    // Live: a later change reaches Prometheus at the next scrape.
    metrics.StepsCompleted("mrc", 9);
    metrics.JobState("mrc", "completed");
    ExpectEventually(prometheus, R"(mrclab_steps_completed_total{transport="mrc"})", 9);
    ExpectEventually(prometheus, R"(mrclab_job_state{transport="mrc",state="running"})", 0);
  }
  // Stopped and reaped: the PID is no longer ours.
  EXPECT_NE(kill(pid, 0), 0);
}

}  // namespace
}  // namespace mrclab::harness
