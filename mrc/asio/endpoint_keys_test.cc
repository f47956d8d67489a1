// The keys a remote host needs to touch an endpoint's memory (QPN, rkey, initial PSN) cannot be
// guessed: a real-time endpoint draws them from the kernel's entropy unless a run asks for
// repeatable ones, and nothing in one key tells the next.
#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "mrc/asio/asio_endpoint.h"

namespace mrclab::mrc {
namespace {

struct Keys {
  uint32_t qpn, second_qpn, rkey, psn;
};

Keys KeysOf(std::optional<uint64_t> key_seed) {
  boost::asio::io_context io;
  AsioEndpointConfig config;
  config.key_seed = key_seed;
  AsioEndpoint endpoint(io, config);
  Context& ctx = endpoint.context();
  CompletionQueue& cq = ctx.CreateCq();
  const Qp& first = ctx.CreateQp(QpConfig{}, cq, cq);
  const Qp& second = ctx.CreateQp(QpConfig{}, cq, cq);
  std::vector<uint8_t> buffer(4096);
  const MemoryRegion mr = ctx.RegisterMemory(buffer, kAccessRemoteWrite);
  return {first.qpn(), second.qpn(), mr.rkey, first.config().initial_psn};
}

TEST(EndpointKeys, EveryEndpointDrawsItsOwnUnlessSeeded) {
  // Each comparison collides by chance with probability <= 2^-24.
  const Keys a = KeysOf(std::nullopt), b = KeysOf(std::nullopt);
  EXPECT_NE(a.qpn, b.qpn);
  EXPECT_NE(a.rkey, b.rkey);
  EXPECT_NE(a.psn, b.psn);
  const Keys c = KeysOf(42), d = KeysOf(42);
  EXPECT_EQ(c.qpn, d.qpn);
  EXPECT_EQ(c.rkey, d.rkey);
  EXPECT_EQ(c.psn, d.psn);
}

TEST(EndpointKeys, OneKeyTellsNothingOfTheNext) {
  for (uint64_t seed = 1; seed <= 64; ++seed) {
    const Keys k = KeysOf(seed);
    EXPECT_NE(k.second_qpn, k.qpn + 1) << "QPNs counted up, seed " << seed;
    EXPECT_GE(k.qpn, kFirstQpn);
    EXPECT_LT(k.qpn, kQpnMask);
    EXPECT_NE(k.rkey, 0u);
  }
  // rkeys use all 32 bits (a NIC-style 8-bit key over a table index leaves the upper bits
  // predictable): over 64 regions, some upper byte is set.
  boost::asio::io_context io;
  AsioEndpoint endpoint(io, AsioEndpointConfig{});
  std::vector<uint8_t> buffer(64);
  uint32_t upper = 0;
  for (int i = 0; i < 64; ++i) upper |= endpoint.context().RegisterMemory(buffer, kAccessRemoteWrite).rkey >> 24;
  EXPECT_NE(upper, 0u);
}

}  // namespace
}  // namespace mrclab::mrc
