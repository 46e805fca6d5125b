#include "tiered/local_fs_storage.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "base/env.h"
#include "tiered/test_util.h"

namespace strata::tiered {
namespace {

using testing::RandomBytes;
using testing::TempDir;
using testing::ToBytes;

std::vector<std::string> DirEntries(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) out.push_back(e.path().filename());
  std::sort(out.begin(), out.end());
  return out;
}

TEST(LocalFsStorage, PutGetRoundTripCreatesParents) {
  TempDir dir;
  LocalFsStorage s(dir.path() + "/root");
  Bytes data = RandomBytes(3'000'001, 7);
  ASSERT_TRUE(s.Put("t-1/0/00000000000000000042.log", PutSource::Memory(data)).ok());
  auto got = s.Get("t-1/0/00000000000000000042.log");
  ASSERT_TRUE(got.ok()) << got.error().message;
  EXPECT_EQ(*got, data);
  // Nothing but the object itself is left in its directory.
  EXPECT_EQ(DirEntries(dir.path() + "/root/t-1/0"),
            std::vector<std::string>{"00000000000000000042.log"});
}

TEST(LocalFsStorage, PutFromFileAndOverwrite) {
  TempDir dir;
  LocalFsStorage s(dir / "root");
  Bytes data = RandomBytes(100'000, 1);
  {
    std::ofstream f(dir / "src.bin", std::ios::binary);
    f.write(reinterpret_cast<const char*>(data.data()), std::streamsize(data.size()));
  }
  ASSERT_TRUE(s.Put("a", PutSource::Memory(ToBytes("old contents"))).ok());
  ASSERT_TRUE(s.Put("a", PutSource::File(dir / "src.bin")).ok());
  EXPECT_EQ(*s.Get("a"), data);
  auto st = s.Stat("a");
  ASSERT_TRUE(st.ok());
  EXPECT_TRUE(st->exists);
  EXPECT_FALSE(st->is_dir);
  EXPECT_EQ(st->size, 100'000u);
}

TEST(LocalFsStorage, FailedPutLeavesNothingVisibleAndKeepsOldObject) {
  TempDir dir;
  LocalFsStorage s(dir / "root");
  ASSERT_TRUE(s.Put("seg/a.log", PutSource::Memory(ToBytes("version 1"))).ok());

  // A cancelled upload fails after its temporary file was created.
  CallOptions cancelled;
  cancelled.cancel = MakeCancelFlag();
  cancelled.cancel->store(true);
  Bytes big = RandomBytes(4 << 20, 3);
  Status st = s.Put("seg/a.log", PutSource::Memory(big), cancelled);
  EXPECT_EQ(st.error().code, Errc::kShuttingDown);
  st = s.Put("seg/b.log", PutSource::Memory(big), cancelled);
  EXPECT_EQ(st.error().code, Errc::kShuttingDown);

  // A source that cannot be read.
  st = s.Put("seg/c.log", PutSource::File(dir / "missing"));
  EXPECT_EQ(st.error().code, Errc::kNotFound);
  st = s.Put("seg/c.log", PutSource::File(dir.path()));  // a directory
  EXPECT_EQ(st.error().code, Errc::kInvalidArgument);

  EXPECT_EQ(*s.Get("seg/a.log"), ToBytes("version 1"));
  EXPECT_FALSE(s.Stat("seg/b.log")->exists);
  EXPECT_FALSE(s.Stat("seg/c.log")->exists);
  // No temporary file was left behind either.
  EXPECT_EQ(DirEntries(dir / "root/seg"), std::vector<std::string>{"a.log"});
}

TEST(LocalFsStorage, FullDiskFailsPutAndKeepsTheOldObject) {
  TempDir dir;
  FaultInjectingEnv env(Env::Default());
  LocalFsStorage s(dir / "root", &env);
  ASSERT_TRUE(s.Put("seg/a.log", PutSource::Memory(ToBytes("version 1"))).ok());
  Bytes big = RandomBytes(3 << 20, 5);
  {
    std::ofstream f(dir / "src.bin", std::ios::binary);
    f.write(reinterpret_cast<const char*>(big.data()), std::streamsize(big.size()));
  }
  // The disk fills in the middle of the second 1 MiB chunk; what was written lands.
  env.FailAfterBytes((1 << 20) + 1000, /*torn=*/true);
  Status st = s.Put("seg/a.log", PutSource::Memory(big));
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, Errc::kIoError);
  EXPECT_NE(st.error().message.find("No space"), std::string::npos) << st.error().message;
  env.FailAfterBytes(1000, /*torn=*/true);
  st = s.Put("seg/b.log", PutSource::File(dir / "src.bin"));
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, Errc::kIoError);

  EXPECT_EQ(*s.Get("seg/a.log"), ToBytes("version 1"));
  EXPECT_FALSE(s.Stat("seg/b.log")->exists);
  EXPECT_EQ(DirEntries(dir / "root/seg"), std::vector<std::string>{"a.log"});
  env.Heal();
  ASSERT_TRUE(s.Put("seg/a.log", PutSource::File(dir / "src.bin")).ok());
  EXPECT_EQ(*s.Get("seg/a.log"), big);
}

TEST(LocalFsStorage, FailedDirectorySyncFailsPut) {
  TempDir dir;
  FaultInjectingEnv env(Env::Default());
  LocalFsStorage s(dir / "root", &env);
  env.FailDirSyncs(true);
  Status st = s.Put("a", PutSource::Memory(ToBytes("x")));
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, Errc::kIoError);  // retriable: a retried Put rewrites it
}

TEST(LocalFsStorage, ListHidesTemporariesOfInterruptedUploads) {
  TempDir dir;
  LocalFsStorage s(dir / "root");
  ASSERT_TRUE(s.Put("d/x", PutSource::Memory(ToBytes("12345"))).ok());
  ASSERT_TRUE(s.MkDirs("d/sub").ok());
  // What a crash in the middle of a Put leaves behind.
  std::string tmp = TemporaryNameFor(dir.path() + "/root/d/y");
  { std::ofstream(tmp) << "partial"; }
  ASSERT_TRUE(IsTemporaryName(std::filesystem::path(tmp).filename().string()));

  auto list = s.List("d");
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].name, "sub");
  EXPECT_TRUE((*list)[0].is_dir);
  EXPECT_EQ((*list)[1].name, "x");
  EXPECT_EQ((*list)[1].size, 5u);
  EXPECT_FALSE(s.Stat("d/y")->exists);

  auto root = s.List("");
  ASSERT_TRUE(root.ok());
  ASSERT_EQ(root->size(), 1u);
  EXPECT_EQ((*root)[0].name, "d");
  auto missing = s.List("nope/deeper");
  ASSERT_TRUE(missing.ok());
  EXPECT_TRUE(missing->empty());
  EXPECT_EQ(s.List("d/x").error().code, Errc::kInvalidArgument);  // a file
}

TEST(LocalFsStorage, RangedGet) {
  TempDir dir;
  LocalFsStorage s(dir / "root");
  Bytes data = RandomBytes(10'000, 9);
  ASSERT_TRUE(s.Put("f", PutSource::Memory(data)).ok());
  EXPECT_EQ(*s.Get("f", 1234, 100), Bytes(data.begin() + 1234, data.begin() + 1334));
  EXPECT_EQ(*s.Get("f", 9990, 100), Bytes(data.begin() + 9990, data.end()));  // clipped at EOF
  EXPECT_EQ(*s.Get("f", 500), Bytes(data.begin() + 500, data.end()));
  EXPECT_TRUE(s.Get("f", 10'000, 5)->empty());
  EXPECT_EQ(s.Get("f", 10'001, 5).error().code, Errc::kOutOfRange);
  EXPECT_EQ(s.Get("g", 0, 5).error().code, Errc::kNotFound);
}

TEST(LocalFsStorage, DeleteIsIdempotent) {
  TempDir dir;
  LocalFsStorage s(dir / "root");
  ASSERT_TRUE(s.Put("d/a", PutSource::Memory(ToBytes("a"))).ok());
  ASSERT_TRUE(s.Put("d/e/b", PutSource::Memory(ToBytes("b"))).ok());
  EXPECT_TRUE(s.Delete("d/a").ok());
  EXPECT_TRUE(s.Delete("d/a").ok());
  EXPECT_TRUE(s.Delete("never/was").ok());
  EXPECT_FALSE(s.Stat("d/a")->exists);
  // A non-empty directory needs recursive.
  EXPECT_EQ(s.Delete("d").error().code, Errc::kInvalidArgument);
  EXPECT_TRUE(s.Stat("d/e/b")->exists);
  EXPECT_TRUE(s.Delete("d", /*recursive=*/true).ok());
  EXPECT_FALSE(s.Stat("d")->exists);
  EXPECT_TRUE(s.Delete("d", /*recursive=*/true).ok());
  // An empty directory goes without recursive.
  ASSERT_TRUE(s.MkDirs("e/f").ok());
  EXPECT_TRUE(s.Delete("e/f").ok());
  EXPECT_FALSE(s.Stat("e/f")->exists);
  EXPECT_TRUE(s.Stat("e")->is_dir);
}

TEST(LocalFsStorage, RenameNeverReplaces) {
  TempDir dir;
  LocalFsStorage s(dir / "root");
  ASSERT_TRUE(s.Put("a", PutSource::Memory(ToBytes("A"))).ok());
  ASSERT_TRUE(s.Put("b", PutSource::Memory(ToBytes("B"))).ok());
  EXPECT_EQ(s.Rename("a", "b").error().code, Errc::kAlreadyExists);
  EXPECT_EQ(*s.Get("b"), ToBytes("B"));
  EXPECT_TRUE(s.Rename("a", "c").ok());
  EXPECT_FALSE(s.Stat("a")->exists);
  EXPECT_EQ(*s.Get("c"), ToBytes("A"));
  EXPECT_EQ(s.Rename("a", "d").error().code, Errc::kNotFound);
  EXPECT_EQ(s.Rename("c", "no/parent").error().code, Errc::kNotFound);
}

TEST(LocalFsStorage, MkDirsAndStat) {
  TempDir dir;
  LocalFsStorage s(dir / "root");
  ASSERT_TRUE(s.MkDirs("x/y/z").ok());
  ASSERT_TRUE(s.MkDirs("x/y/z").ok());
  auto st = s.Stat("x/y");
  ASSERT_TRUE(st.ok());
  EXPECT_TRUE(st->exists);
  EXPECT_TRUE(st->is_dir);
  EXPECT_GT(st->mtime_ms, 1'600'000'000'000);
  ASSERT_TRUE(s.Put("f", PutSource::Memory(ToBytes("1"))).ok());
  EXPECT_FALSE(s.MkDirs("f").ok());
  auto root = s.Stat("");
  ASSERT_TRUE(root.ok());
  EXPECT_TRUE(root->is_dir);
}

TEST(LocalFsStorage, RejectsBadPaths) {
  TempDir dir;
  LocalFsStorage s(dir / "root");
  for (std::string_view p : {"", "/abs", "a/../b", "a//b", "./a", "a/", ".."}) {
    EXPECT_EQ(s.Put(p, PutSource::Memory(ToBytes("x"))).error().code, Errc::kInvalidArgument) << p;
    EXPECT_EQ(s.Get(p).error().code, Errc::kInvalidArgument) << p;
  }
  EXPECT_FALSE(std::filesystem::exists(dir / "b"));
}

}  // namespace
}  // namespace strata::tiered
