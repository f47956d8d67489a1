#include "mrc/core/flat_id_map.h"

#include <gtest/gtest.h>

#include <map>
#include <random>

namespace mrclab::mrc {
namespace {

// Random puts and erases over a small id space (long probe runs, wrap-around, erases in the
// middle of runs) must leave the map holding exactly what std::map holds.
void CheckAgainstStdMap(uint32_t id_space, uint32_t seed) {
  FlatIdMap<uint64_t> flat;
  std::map<uint32_t, uint64_t> reference;
  std::mt19937 rng(seed);
  for (int op = 0; op < 20000; ++op) {
    const uint32_t id = rng() % id_space * 4096;  // ids that share low bits
    if (rng() % 3 == 0) {
      EXPECT_EQ(flat.Erase(id), reference.erase(id) == 1) << "erase " << id;
    } else {
      const uint64_t value = rng();
      flat.Put(id, value);
      reference[id] = value;
    }
    ASSERT_EQ(flat.Size(), reference.size());
  }
  for (uint32_t k = 0; k < id_space; ++k) {
    const uint32_t id = k * 4096;
    const auto it = reference.find(id);
    const uint64_t* found = flat.Find(id);
    ASSERT_EQ(found != nullptr, it != reference.end()) << "id " << id;
    if (found) {
      EXPECT_EQ(*found, it->second) << "id " << id;
    }
  }
}

TEST(FlatIdMap, MatchesStdMapUnderPutsAndErases) {
  for (uint32_t seed : {1u, 2u, 3u}) {
    CheckAgainstStdMap(16, seed);
    CheckAgainstStdMap(300, seed);
  }
}

TEST(FlatIdMap, EmptyAndReplace) {
  FlatIdMap<int> map;
  EXPECT_EQ(map.Find(0), nullptr);
  EXPECT_FALSE(map.Erase(0));
  map.Put(0, 1);
  map.Put(0, 2);
  EXPECT_EQ(map.Size(), 1u);
  EXPECT_EQ(*map.Find(0), 2);
  EXPECT_TRUE(map.Erase(0));
  EXPECT_FALSE(map.Contains(0));
}

}  // namespace
}  // namespace mrclab::mrc
