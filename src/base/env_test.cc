// Env's crash-safe replace on the real file system and under
// FaultInjectingEnv: a replace is all or nothing (disk full, torn writes),
// and directory fsync failures reach the caller.
#include "base/env.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace strata {
namespace {

namespace fs = std::filesystem;

ByteView View(const std::string& s) {
  return ByteView(reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

class EnvTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = (fs::temp_directory_path() / "strata-env-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Read(const fs::path& path) {
    auto data = Env::Default()->ReadFile(path);
    EXPECT_TRUE(data.ok()) << data.error().message;
    return data.ok() ? std::string(data->begin(), data->end()) : std::string();
  }
  // Names in dir_, sorted.
  std::vector<std::string> Entries() {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_)) out.push_back(e.path().filename());
    std::sort(out.begin(), out.end());
    return out;
  }

  fs::path dir_;
  Env* env_ = Env::Default();
  FaultInjectingEnv faulty_{Env::Default()};
};

TEST_F(EnvTest, WriteFileAtomicReplacesOldContentFully) {
  fs::path path = dir_ / "state";
  ASSERT_TRUE(env_->WriteFileAtomic(path, View(std::string(1000, 'a'))).ok());
  ASSERT_TRUE(env_->WriteFileAtomic(path, View("short")).ok());
  EXPECT_EQ(Read(path), "short");  // no tail of the longer old content
  ASSERT_TRUE(env_->WriteFileAtomic(path, ByteView()).ok());
  EXPECT_EQ(Read(path), "");
  EXPECT_EQ(Entries(), std::vector<std::string>{"state"});  // no temp file left
}

TEST_F(EnvTest, DiskFullFailsTheWriteAndKeepsTheOldContent) {
  fs::path path = dir_ / "state";
  ASSERT_TRUE(faulty_.WriteFileAtomic(path, View("old content")).ok());
  for (int64_t budget : {0, 5}) {
    faulty_.FailAfterBytes(budget);
    Status st = faulty_.WriteFileAtomic(path, View("new content, longer than the budget"));
    ASSERT_FALSE(st.ok()) << budget;
    EXPECT_EQ(st.error().code, Errc::kIoError);
    EXPECT_NE(st.error().message.find("No space"), std::string::npos) << st.error().message;
    EXPECT_EQ(Read(path), "old content");
    EXPECT_EQ(Entries(), std::vector<std::string>{"state"});  // the temp file is removed
  }
  faulty_.Heal();
  ASSERT_TRUE(faulty_.WriteFileAtomic(path, View("new")).ok());
  EXPECT_EQ(Read(path), "new");
}

TEST_F(EnvTest, TornAppendLandsInPart) {
  // The fault the next test relies on: a torn write leaves its first bytes.
  fs::path path = dir_ / "journal";
  auto file = faulty_.OpenAppendable(path);
  ASSERT_TRUE(file.ok());
  faulty_.FailAfterBytes(4, /*torn=*/true);
  EXPECT_FALSE((*file)->Append(View("0123456789")).ok());
  EXPECT_EQ(Read(path), "0123");
}

TEST_F(EnvTest, TornWriteNeverShowsAPartialTarget) {
  fs::path old_file = dir_ / "old";
  fs::path new_file = dir_ / "new";
  ASSERT_TRUE(faulty_.WriteFileAtomic(old_file, View("previous")).ok());
  std::string payload(100, 'x');
  faulty_.FailAfterBytes(10, /*torn=*/true);
  EXPECT_FALSE(faulty_.WriteFileAtomic(old_file, View(payload)).ok());
  faulty_.FailAfterBytes(10, /*torn=*/true);
  EXPECT_FALSE(faulty_.WriteFileAtomic(new_file, View(payload)).ok());
  EXPECT_EQ(Read(old_file), "previous");
  EXPECT_FALSE(fs::exists(new_file));
  EXPECT_EQ(Entries(), std::vector<std::string>{"old"});
}

TEST_F(EnvTest, FailedFillLeavesTargetAndRemovesTemp) {
  fs::path path = dir_ / "object";
  ASSERT_TRUE(env_->WriteFileAtomic(path, View("v1")).ok());
  Status st = env_->ReplaceFile(path, dir_ / ".object.tmp", [](WritableFile& f) -> Status {
    STRATA_RETURN_IF_ERROR(f.Append(View("half")));
    return MakeError(Errc::kShuttingDown, "cancelled");
  });
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, Errc::kShuttingDown);
  EXPECT_EQ(Read(path), "v1");
  EXPECT_EQ(Entries(), std::vector<std::string>{"object"});
}

TEST_F(EnvTest, DirectorySyncErrorsArePropagated) {
  fs::path path = dir_ / "state";
  faulty_.FailDirSyncs(true);
  Status st = faulty_.SyncDir(dir_);
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, Errc::kIoError);
  // The rename happened but is not known durable: the caller must hear of it.
  st = faulty_.WriteFileAtomic(path, View("data"));
  ASSERT_FALSE(st.ok());
  EXPECT_NE(st.error().message.find("fsync"), std::string::npos) << st.error().message;
  faulty_.Heal();
  EXPECT_TRUE(faulty_.SyncDir(dir_).ok());
  EXPECT_TRUE(faulty_.WriteFileAtomic(path, View("data")).ok());
}

}  // namespace
}  // namespace strata
