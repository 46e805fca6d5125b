#include "tiered/remote_storage.h"

#include <gtest/gtest.h>

#include "tiered/local_fs_storage.h"
#include "tiered/remote_uri.h"
#include "tiered/s3_storage.h"
#include "tiered/test_util.h"
#include "tiered/webhdfs_errors.h"
#include "tiered/webhdfs_storage.h"

namespace strata::tiered {
namespace {

TEST(RemoteUri, ParsesFileWebHdfsAndS3) {
  auto f = ParseRemoteUri("file:///var/strata//remote/");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->scheme, "file");
  EXPECT_EQ(f->root, "/var/strata/remote");
  auto w = ParseRemoteUri("WebHDFS://nn1.example:9870/strata/tiered");
  ASSERT_TRUE(w.ok());
  EXPECT_EQ(w->scheme, "webhdfs");
  EXPECT_EQ(w->host, "nn1.example");
  EXPECT_EQ(w->port, 9870);
  EXPECT_EQ(w->root, "/strata/tiered");
  auto root = ParseRemoteUri("webhdfs://127.0.0.1:1234");
  ASSERT_TRUE(root.ok());
  EXPECT_EQ(root->root, "/");
  auto s3 = ParseRemoteUri("s3://strata-tier.eu/cluster-1/");
  ASSERT_TRUE(s3.ok());
  EXPECT_EQ(s3->scheme, "s3");
  EXPECT_EQ(s3->host, "strata-tier.eu");
  EXPECT_EQ(s3->root, "/cluster-1");
}

TEST(RemoteUri, RejectsBadUris) {
  for (std::string_view u :
       {"s3://Bucket/x", "s3://ab/x", "s3://b_x/y", "/plain/path", "webhdfs://host/x",
        "webhdfs://:80/x", "webhdfs://h:0/x", "webhdfs://h:99999/x", "webhdfs://h:12ab/x",
        "file://host/x", "file:///a/../b", "webhdfs://h:1/a?op=x"}) {
    auto r = ParseRemoteUri(u);
    EXPECT_FALSE(r.ok()) << u;
    if (!r.ok()) {
      EXPECT_EQ(r.error().code, Errc::kInvalidArgument) << u;
    }
  }
}

TEST(RemoteStorage, PathValidationAndTemporaryNames) {
  EXPECT_TRUE(ValidatePath("a/b/00000000000000000000.log").ok());
  EXPECT_TRUE(ValidatePath("", /*allow_root=*/true).ok());
  EXPECT_FALSE(ValidatePath("").ok());
  EXPECT_FALSE(ValidatePath("a:b").ok());
  std::string t1 = TemporaryNameFor("dir/seg.log");
  std::string t2 = TemporaryNameFor("dir/seg.log");
  EXPECT_NE(t1, t2);
  EXPECT_EQ(t1.rfind("dir/.seg.log.strata-tmp-", 0), 0u) << t1;
  EXPECT_TRUE(IsTemporaryName(t1.substr(4)));
  EXPECT_FALSE(IsTemporaryName("seg.log"));
  EXPECT_FALSE(IsTemporaryName(".hidden"));
  EXPECT_TRUE(IsRetriable(Errc::kUnavailable));
  EXPECT_TRUE(IsRetriable(Errc::kTimeout));
  EXPECT_TRUE(IsRetriable(Errc::kIoError));
  EXPECT_FALSE(IsRetriable(Errc::kNotFound));
  EXPECT_FALSE(IsRetriable(Errc::kShuttingDown));
}

TEST(RemoteStorage, FactoryOpensBackends) {
  testing::TempDir dir;
  auto local = OpenRemoteStorage("file://" + dir.path() + "/r");
  ASSERT_TRUE(local.ok());
  ASSERT_NE(dynamic_cast<LocalFsStorage*>(local->get()), nullptr);
  ASSERT_TRUE((*local)->Put("x", PutSource::Memory(testing::ToBytes("hi"))).ok());
  EXPECT_EQ(*(*local)->Get("x"), testing::ToBytes("hi"));

  auto hdfs = OpenRemoteStorage("webhdfs://127.0.0.1:1/strata", {.user = "alice"});
  ASSERT_TRUE(hdfs.ok());
  auto* w = dynamic_cast<WebHdfsStorage*>(hdfs->get());
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->user(), "alice");
  // Nothing listens on port 1: a connection failure is kUnavailable, and quick.
  auto st = (*hdfs)->Stat("x");
  ASSERT_FALSE(st.ok());
  EXPECT_EQ(st.error().code, Errc::kUnavailable) << st.error().message;

  RemoteStorageOptions s3_options;
  s3_options.s3.endpoint = "http://127.0.0.1:1";
  s3_options.s3.path_style = true;
  s3_options.s3.credentials.access_key_id = "AK";
  s3_options.s3.credentials.secret_access_key = "SK";
  auto s3 = OpenRemoteStorage("s3://tier-bucket/cluster/a", s3_options);
  ASSERT_TRUE(s3.ok());
  auto* s = dynamic_cast<S3Storage*>(s3->get());
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(s->options().bucket, "tier-bucket");
  EXPECT_EQ(s->options().prefix, "cluster/a");
  EXPECT_EQ((*s3)->Get("x").error().code, Errc::kUnavailable);

  EXPECT_EQ(OpenRemoteStorage("ftp://x/y").error().code, Errc::kInvalidArgument);
}

TEST(WebHdfsErrors, MapsRemoteExceptions) {
  auto map = [](long status, std::string_view body) {
    return MapWebHdfsError(status, testing::ToBytes(body), "OP /p");
  };
  Error e = map(404, R"({"RemoteException":{"exception":"FileNotFoundException",
      "javaClassName":"java.io.FileNotFoundException","message":"File does not exist: /p"}})");
  EXPECT_EQ(e.code, Errc::kNotFound);
  EXPECT_EQ(e.message, "OP /p: HTTP 404 FileNotFoundException: File does not exist: /p");
  EXPECT_EQ(
      map(403, R"({"RemoteException":{"exception":"FileAlreadyExistsException","message":"x"}})")
          .code,
      Errc::kAlreadyExists);
  EXPECT_EQ(
      map(403, R"({"RemoteException":{"exception":"RetriableException","message":"safe mode"}})")
          .code,
      Errc::kUnavailable);
  EXPECT_EQ(map(403, R"({"RemoteException":{"exception":"StandbyException","message":"x"}})").code,
            Errc::kUnavailable);
  EXPECT_EQ(
      map(403, R"({"RemoteException":{"exception":"AccessControlException","message":"x"}})").code,
      Errc::kInvalidArgument);
  EXPECT_EQ(map(403, R"({"RemoteException":{"exception":"EOFException","message":"x"}})").code,
            Errc::kOutOfRange);
  EXPECT_EQ(
      map(403,
          R"({"RemoteException":{"exception":"PathIsNotEmptyDirectoryException","message":"x"}})")
          .code,
      Errc::kInvalidArgument);
  EXPECT_EQ(
      map(403, R"({"RemoteException":{"exception":"DSQuotaExceededException","message":"x"}})")
          .code,
      Errc::kTooLarge);
  EXPECT_EQ(map(403, R"({"RemoteException":{"exception":"IOException","message":"x"}})").code,
            Errc::kIoError);
  EXPECT_EQ(
      map(400, R"({"RemoteException":{"exception":"IllegalArgumentException","message":"x"}})")
          .code,
      Errc::kInvalidArgument);
  // No RemoteException: the status decides.
  EXPECT_EQ(map(503, "Service Unavailable").code, Errc::kUnavailable);
  EXPECT_EQ(map(500, "").code, Errc::kUnavailable);
  EXPECT_EQ(map(404, "<html>").code, Errc::kNotFound);
  EXPECT_EQ(map(401, "").code, Errc::kInvalidArgument);
  Error trace = map(403,
                    "{\"RemoteException\":{\"exception\":\"IOException\",\"message\":"
                    "\"boom\\n\\tat org.apache.X(X.java:1)\"}}");
  EXPECT_EQ(trace.message, "OP /p: HTTP 403 IOException: boom");
  Error plain = map(502, "bad gateway");
  EXPECT_EQ(plain.message, "OP /p: HTTP 502: bad gateway");
}

}  // namespace
}  // namespace strata::tiered
