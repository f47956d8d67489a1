#include "harness/telemetry/metrics_exporter.h"

#include <gtest/gtest.h>

#include <stdexcept>
#include <thread>
#include <vector>

#include "harness/telemetry/test_http.h"

namespace mrclab::harness {
namespace {

using testing::HttpGet;
using testing::SampleValue;

std::string Scrape(const DrillMetrics& metrics) {
  testing::HttpResponse r = HttpGet(metrics.port(), "/metrics");
  EXPECT_EQ(r.status, 200);
  return r.body;
}

double Value(const std::string& exposition, const std::string& series) {
  auto v = SampleValue(exposition, series);
  if (!v) ADD_FAILURE() << "no sample " << series << " in:\n" << exposition;
  return v.value_or(-1);
}

TEST(DrillMetrics, PortZeroPicksAFreePortAndServesMetrics) {
  DrillMetrics metrics({"127.0.0.1:0"});
  ASSERT_NE(metrics.port(), 0);
  EXPECT_EQ(metrics.url(), "http://127.0.0.1:" + std::to_string(metrics.port()) + "/metrics");
  const std::string text = Scrape(metrics);
  EXPECT_EQ(Value(text, "mrclab_faults_active"), 0);
}

TEST(DrillMetrics, ExportsEveryMetricWithItsLabels) {
  DrillMetrics m({"127.0.0.1:0"});
  m.ObserveStep("mrc", 0.02);
  m.ObserveStep("mrc", 3.0);
  m.StepsCompleted("mrc", 7);
  m.JobState("mrc", "running");
  m.FaultsActive(2);
  m.FaultApplied("link_down");
  m.FaultApplied("link_down");
  m.FaultApplied("bgpd_kill");
  m.EvState("mrc", "qp0", 3, 1, "assumed_bad");
  m.EvPackets("mrc", "qp0", 3, 1000, 12);
  m.Retransmissions("rc", 40);
  m.LinkCounters("5", "p0-leaf0:spine0", 10, 20, 1, 2);

  const std::string t = Scrape(m);
  EXPECT_EQ(Value(t, R"(mrclab_step_seconds_count{transport="mrc"})"), 2);
  EXPECT_DOUBLE_EQ(Value(t, R"(mrclab_step_seconds_sum{transport="mrc"})"), 3.02);
  EXPECT_EQ(Value(t, R"(mrclab_step_seconds_bucket{transport="mrc",le="0.01"})"), 0);
  EXPECT_EQ(Value(t, R"(mrclab_step_seconds_bucket{transport="mrc",le="0.025"})"), 1);
  EXPECT_EQ(Value(t, R"(mrclab_step_seconds_bucket{transport="mrc",le="60"})"), 2);
  EXPECT_EQ(Value(t, R"(mrclab_step_seconds_bucket{transport="mrc",le="+Inf"})"), 2);
  EXPECT_EQ(Value(t, R"(mrclab_steps_completed_total{transport="mrc"})"), 7);
  EXPECT_EQ(Value(t, R"(mrclab_job_state{state="running",transport="mrc"})"), 1);
  for (const char* s : {"idle", "completed", "interrupted", "failed"})
    EXPECT_EQ(Value(t, std::string("mrclab_job_state{state=\"") + s + "\",transport=\"mrc\"}"), 0);
  EXPECT_EQ(Value(t, "mrclab_faults_active"), 2);
  EXPECT_EQ(Value(t, R"(mrclab_faults_applied_total{kind="link_down"})"), 2);
  EXPECT_EQ(Value(t, R"(mrclab_faults_applied_total{kind="bgpd_kill"})"), 1);
  EXPECT_EQ(Value(t, R"(mrclab_ev_state{ev="3",plane="1",qp="qp0",state="assumed_bad",transport="mrc"})"), 1);
  EXPECT_EQ(Value(t, R"(mrclab_ev_state{ev="3",plane="1",qp="qp0",state="good",transport="mrc"})"), 0);
  EXPECT_EQ(Value(t, R"(mrclab_ev_state{ev="3",plane="1",qp="qp0",state="denied",transport="mrc"})"), 0);
  EXPECT_EQ(Value(t, R"(mrclab_ev_tx_packets_total{ev="3",qp="qp0",transport="mrc"})"), 1000);
  EXPECT_EQ(Value(t, R"(mrclab_ev_retransmits_total{ev="3",qp="qp0",transport="mrc"})"), 12);
  EXPECT_EQ(Value(t, R"(mrclab_retransmissions_total{transport="rc"})"), 40);
  EXPECT_EQ(Value(t, R"(mrclab_link_rx_packets_total{end="p0-leaf0:spine0",link="5"})"), 10);
  EXPECT_EQ(Value(t, R"(mrclab_link_tx_packets_total{end="p0-leaf0:spine0",link="5"})"), 20);
  EXPECT_EQ(Value(t, R"(mrclab_link_rx_dropped_total{end="p0-leaf0:spine0",link="5"})"), 1);
  EXPECT_EQ(Value(t, R"(mrclab_link_tx_dropped_total{end="p0-leaf0:spine0",link="5"})"), 2);
}

TEST(DrillMetrics, CountersFollowTotalsAndNeverDecrease) {
  DrillMetrics m({"127.0.0.1:0"});
  const std::string series = R"(mrclab_steps_completed_total{transport="mrc"})";
  m.StepsCompleted("mrc", 5);
  EXPECT_EQ(Value(Scrape(m), series), 5);
  m.StepsCompleted("mrc", 9);
  m.StepsCompleted("mrc", 9);  // unchanged total: no growth
  EXPECT_EQ(Value(Scrape(m), series), 9);
  m.StepsCompleted("mrc", 3);  // the source restarted: 3 new steps
  EXPECT_EQ(Value(Scrape(m), series), 12);
  m.StepsCompleted("mrc", 4);
  EXPECT_EQ(Value(Scrape(m), series), 13);
  // Label sets are independent.
  m.StepsCompleted("rc", 2);
  const std::string t = Scrape(m);
  EXPECT_EQ(Value(t, series), 13);
  EXPECT_EQ(Value(t, R"(mrclab_steps_completed_total{transport="rc"})"), 2);
}

TEST(DrillMetrics, StatesAreOneHot) {
  DrillMetrics m({"127.0.0.1:0"});
  auto job = [](const std::string& state) {
    return "mrclab_job_state{state=\"" + state + "\",transport=\"mrc\"}";
  };
  m.JobState("mrc", "running");
  m.JobState("mrc", "completed");
  std::string t = Scrape(m);
  EXPECT_EQ(Value(t, job("running")), 0);
  EXPECT_EQ(Value(t, job("completed")), 1);
  m.JobState("mrc", "paused");  // not a listed state: exported, and the others go to 0
  t = Scrape(m);
  EXPECT_EQ(Value(t, job("paused")), 1);
  EXPECT_EQ(Value(t, job("completed")), 0);
  m.JobState("mrc", "failed");
  t = Scrape(m);
  EXPECT_EQ(Value(t, job("paused")), 0);
  EXPECT_EQ(Value(t, job("failed")), 1);

  const std::string ev = R"(mrclab_ev_state{ev="0",plane="0",qp="q",state=")";
  m.EvState("mrc", "q", 0, 0, "denied");
  m.EvState("mrc", "q", 0, 0, "good");
  t = Scrape(m);
  EXPECT_EQ(Value(t, ev + R"(good",transport="mrc"})"), 1);
  EXPECT_EQ(Value(t, ev + R"(denied",transport="mrc"})"), 0);
  EXPECT_EQ(Value(t, ev + R"(assumed_bad",transport="mrc"})"), 0);
  m.EvState("mrc", "q", 0, 0, "ASSUMED_BAD");  // the transport's spelling is the same state
  t = Scrape(m);
  EXPECT_EQ(Value(t, ev + R"(assumed_bad",transport="mrc"})"), 1);
  EXPECT_EQ(Value(t, ev + R"(good",transport="mrc"})"), 0);
}

TEST(DrillMetrics, EvCountsPerPlaneAndState) {
  DrillMetrics m({"127.0.0.1:0"});
  m.EvCounts("mrc", {{0, {{"GOOD", 60}, {"ASSUMED_BAD", 4}}}, {1, {{"GOOD", 64}}}});
  std::string t = Scrape(m);
  EXPECT_EQ(Value(t, R"(mrclab_evs{plane="0",state="good",transport="mrc"})"), 60);
  EXPECT_EQ(Value(t, R"(mrclab_evs{plane="0",state="assumed_bad",transport="mrc"})"), 4);
  EXPECT_EQ(Value(t, R"(mrclab_evs{plane="1",state="assumed_bad",transport="mrc"})"), 0);
  EXPECT_EQ(Value(t, R"(mrclab_evs{plane="1",state="denied",transport="mrc"})"), 0);
  m.EvCounts("mrc", {{0, {{"GOOD", 64}}}});  // back to good: the bad count goes to 0
  t = Scrape(m);
  EXPECT_EQ(Value(t, R"(mrclab_evs{plane="0",state="assumed_bad",transport="mrc"})"), 0);
}

TEST(DrillMetrics, SettersAreThreadSafe) {
  DrillMetrics m({"127.0.0.1:0"});
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i)
    threads.emplace_back([&m, i] {
      for (int k = 1; k <= 1000; ++k) {
        m.FaultApplied("flap");
        m.ObserveStep("mrc", 0.1);
        m.LinkCounters(std::to_string(i), "n:i", k, k, 0, 0);
      }
    });
  for (auto& t : threads) t.join();
  const std::string t = Scrape(m);
  EXPECT_EQ(Value(t, R"(mrclab_faults_applied_total{kind="flap"})"), 4000);
  EXPECT_EQ(Value(t, R"(mrclab_step_seconds_count{transport="mrc"})"), 4000);
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(Value(t, "mrclab_link_rx_packets_total{end=\"n:i\",link=\"" + std::to_string(i) + "\"}"),
              1000);
}

TEST(DrillMetrics, TakenPortIsAClearError) {
  DrillMetrics first({"127.0.0.1:0"});
  const std::string bind = "127.0.0.1:" + std::to_string(first.port());
  try {
    DrillMetrics second({bind});
    FAIL() << "second exporter on " << bind << " started";
  } catch (const std::runtime_error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("cannot listen on " + bind), std::string::npos) << what;
    EXPECT_NE(what.find("Address already in use"), std::string::npos) << what;
  }
  // The first one still serves.
  EXPECT_EQ(HttpGet(first.port(), "/metrics").status, 200);
}

TEST(DrillMetrics, ASecondDrillGetsAFreePortWhenAllowed) {
  DrillMetrics first({"127.0.0.1:0"});
  const std::string bind = "127.0.0.1:" + std::to_string(first.port());
  EXPECT_EQ(MetricsBindProblem(bind), "Address already in use");
  DrillMetrics second({bind, /*free_port_if_taken=*/true});
  EXPECT_NE(second.port(), first.port());
  EXPECT_EQ(second.taken_port(), first.port());
  EXPECT_EQ(HttpGet(first.port(), "/metrics").status, 200);
  EXPECT_EQ(HttpGet(second.port(), "/metrics").status, 200);
  EXPECT_EQ(first.taken_port(), 0);
}

TEST(DrillMetrics, MalformedAddressIsAClearError) {
  for (const char* bind : {"9464", "localhost:9464", "127.0.0.1:99999", "127.0.0.1:", "[::1:80"}) {
    try {
      DrillMetrics m({bind});
      ADD_FAILURE() << bind << " accepted";
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("bad bind address '") + bind + "'"),
                std::string::npos)
          << e.what();
    }
  }
}

}  // namespace
}  // namespace mrclab::harness
