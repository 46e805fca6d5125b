// Durability of the embedded store: reopen, torn journal tails, a full disk.
#include "cluster/embedded_kv_store.h"

#include <gtest/gtest.h>

#include <fstream>

namespace strata::cluster {
namespace {

Result<TxnResult> Put(KvStore& s, const std::string& k, const std::string& v, LeaseId lease = 0) {
  KvOp op = KvOp::Put(k, v, lease);
  return s.Txn({}, std::span<const KvOp>(&op, 1));
}

class EmbeddedKvStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("strata-ekv-" + std::to_string(::getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::remove_all(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }
  std::filesystem::path dir_;
};

TEST_F(EmbeddedKvStoreTest, StateAndRevisionsSurviveReopen) {
  Revision last = 0;
  {
    auto s = EmbeddedKvStore::Open(dir_).value();
    ASSERT_TRUE(Put(*s, "/a", "1").ok());
    ASSERT_TRUE(Put(*s, "/a", "2").ok());
    ASSERT_TRUE(Put(*s, "/b", "x").ok());
    KvOp del = KvOp::Delete("/b");
    ASSERT_TRUE(s->Txn({}, std::span(&del, 1)).ok());
    LeaseId lease = s->GrantLease(std::chrono::seconds(60)).value();
    ASSERT_TRUE(Put(*s, "/leased", "gone after restart", lease).ok());
    last = Put(*s, "/c", "3").value().revision;
  }
  auto s = EmbeddedKvStore::Open(dir_).value();
  auto a = s->Get("/a").value();
  ASSERT_EQ(a.kvs.size(), 1u);
  EXPECT_EQ(a.kvs[0].value, "2");
  EXPECT_EQ(a.kvs[0].version, 2);
  EXPECT_TRUE(s->Get("/b").value().kvs.empty());
  EXPECT_TRUE(s->Get("/leased").value().kvs.empty());
  EXPECT_EQ(a.revision, last);
  // Revisions go on from where they were: CAS on an old mod_revision holds.
  KvCompare c = KvCompare::ModRevisionIs("/a", a.kvs[0].mod_revision);
  KvOp op = KvOp::Put("/a", "3");
  auto r = s->Txn(std::span(&c, 1), std::span(&op, 1)).value();
  EXPECT_TRUE(r.succeeded);
  EXPECT_EQ(r.revision, last + 1);
}

TEST_F(EmbeddedKvStoreTest, SnapshotFoldsTheJournal) {
  EmbeddedKvOptions opts;
  opts.journal_snapshot_bytes = 4096;
  {
    auto s = EmbeddedKvStore::Open(dir_, Env::Default(), opts).value();
    for (int i = 0; i < 200; ++i)
      ASSERT_TRUE(Put(*s, "/k" + std::to_string(i % 20), std::to_string(i)).ok());
  }
  EXPECT_TRUE(std::filesystem::exists(dir_ / "kv.snapshot"));
  EXPECT_LT(std::filesystem::file_size(dir_ / "kv.journal"), 4096u + 200);
  auto s = EmbeddedKvStore::Open(dir_, Env::Default(), opts).value();
  auto all = s->GetPrefix("/k").value();
  ASSERT_EQ(all.kvs.size(), 20u);
  EXPECT_EQ(all.revision, 200);
  EXPECT_EQ(s->Get("/k19").value().kvs[0].value, "199");
  EXPECT_EQ(s->Get("/k19").value().kvs[0].version, 10);
}

TEST_F(EmbeddedKvStoreTest, TornJournalTailIsCutAtOpen) {
  {
    auto s = EmbeddedKvStore::Open(dir_).value();
    ASSERT_TRUE(Put(*s, "/a", "1").ok());
    ASSERT_TRUE(Put(*s, "/b", "2").ok());
  }
  auto journal = dir_ / "kv.journal";
  auto full = std::filesystem::file_size(journal);
  std::filesystem::resize_file(journal, full - 3);  // the last record torn
  {
    auto s = EmbeddedKvStore::Open(dir_).value();
    EXPECT_EQ(s->Get("/a").value().kvs.size(), 1u);
    EXPECT_TRUE(s->Get("/b").value().kvs.empty());
    ASSERT_TRUE(Put(*s, "/c", "3").ok());  // appended after the cut, not after garbage
  }
  auto s = EmbeddedKvStore::Open(dir_).value();
  EXPECT_EQ(s->Get("/c").value().kvs.size(), 1u);
  EXPECT_EQ(s->Get("/c").value().revision, 2);
}

TEST_F(EmbeddedKvStoreTest, FullDiskFailsTheWriteAndLosesNothing) {
  FaultInjectingEnv env(Env::Default());
  {
    auto s = EmbeddedKvStore::Open(dir_, &env).value();
    ASSERT_TRUE(Put(*s, "/a", "1").ok());
    env.FailAfterBytes(10, /*torn=*/true);  // the next record lands in part
    auto r = Put(*s, "/b", std::string(100, 'x'));
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.error().code, Errc::kIoError);
    EXPECT_NE(r.error().message.find("No space"), std::string::npos) << r.error().message;
    EXPECT_TRUE(s->Get("/b").value().kvs.empty());  // not applied
    env.Heal();
    ASSERT_TRUE(Put(*s, "/c", "3").ok());
  }
  auto s = EmbeddedKvStore::Open(dir_).value();
  EXPECT_EQ(s->Get("/a").value().kvs.size(), 1u);
  EXPECT_TRUE(s->Get("/b").value().kvs.empty());
  EXPECT_EQ(s->Get("/c").value().kvs[0].value, "3");
}

TEST_F(EmbeddedKvStoreTest, DamagedSnapshotIsAClearError) {
  {
    auto s = EmbeddedKvStore::Open(dir_).value();
    ASSERT_TRUE(Put(*s, "/a", "1").ok());
  }
  std::ofstream(dir_ / "kv.snapshot") << "not a snapshot";
  auto s = EmbeddedKvStore::Open(dir_);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.error().code, Errc::kCorrupt);
  EXPECT_NE(s.error().message.find("kv.snapshot"), std::string::npos);
}

}  // namespace
}  // namespace strata::cluster
