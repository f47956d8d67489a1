#include "harness/drill/run_recorder.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "emulator/lab_spec.h"

namespace mrclab::harness {
namespace {

namespace fs = std::filesystem;

class RunRecorderTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("run_recorder_test." + std::to_string(::getpid()));
    fs::remove_all(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  static std::string Read(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  fs::path root_;
};

LinkSample Sample(int link, const std::string& end, uint64_t tx, uint64_t rx_dropped = 0) {
  LinkSample s;
  s.link = link;
  s.end = end;
  s.tx_packets = tx;
  s.rx_dropped = rx_dropped;
  return s;
}

TEST_F(RunRecorderTest, LinksCsvListsAnEndFromTheSampleBeforeItsFirstPacket) {
  std::string dir;
  {
    RunRecorder recorder(root_.string(), "s", "", [] { return 0.0; });
    dir = recorder.dir();
    recorder.LinkSamples(1, {Sample(0, "a:x", 5), Sample(1, "b:y", 0), Sample(2, "c:z", 0)});
    recorder.LinkSamples(2, {Sample(0, "a:x", 9), Sample(1, "b:y", 0), Sample(2, "c:z", 0, 3)});
    recorder.LinkSamples(3, {Sample(0, "a:x", 9), Sample(1, "b:y", 4), Sample(2, "c:z", 0, 3)});
  }
  EXPECT_EQ(Read(dir + "/links.csv"),
            "t,link,end,rx_packets,tx_packets,rx_dropped,tx_dropped,queue_peak_bytes\n"
            "1.000,0,a:x,0,5,0,0,\n"
            "2.000,0,a:x,0,9,0,0,\n"
            "1.000,2,c:z,0,0,0,0,\n"  // counted from t=2 on: a zero row at the sample before
            "2.000,2,c:z,0,0,3,0,\n"
            "3.000,0,a:x,0,9,0,0,\n"
            "2.000,1,b:y,0,0,0,0,\n"
            "3.000,1,b:y,0,4,0,0,\n"
            "3.000,2,c:z,0,0,3,0,\n");
}

TEST_F(RunRecorderTest, ABigLabsLabJsonIsItsSummaryWithTheSameDigest) {
  const emulator::ResolvedLab lab = emulator::Resolve(emulator::ParseLabText(
      "name: big\nclos: {planes: 2, spines_per_plane: 2, leaves_per_plane: 4, hosts: 8, hosts_per_leaf: 2}\n",
      "big.yaml"));
  RunRecorder listed(root_.string(), "listed", "", [] { return 0.0; });
  RunRecorder summarised(root_.string(), "summarised", "", [] { return 0.0; });
  const size_t items = lab.nodes.size() + lab.links.size();
  const std::string digest = listed.WriteLab(lab, items);
  EXPECT_EQ(digest, Sha256Hex(lab.ToJson().dump()));
  EXPECT_EQ(summarised.WriteLab(lab, items - 1), digest);

  const nlohmann::json whole = nlohmann::json::parse(Read(listed.dir() + "/lab.json"));
  EXPECT_EQ(whole, lab.ToJson());
  const nlohmann::json summary = nlohmann::json::parse(Read(summarised.dir() + "/lab.json"));
  EXPECT_FALSE(summary.contains("nodes") || summary.contains("links"));
  EXPECT_EQ(summary["planes"], whole["planes"]);
  EXPECT_EQ(summary["not_listed"]["nodes"], lab.nodes.size());
  EXPECT_EQ(summary["not_listed"]["links"], 32);
  EXPECT_EQ(summary["not_listed"]["fabric_links"], 16);
}

}  // namespace
}  // namespace mrclab::harness
