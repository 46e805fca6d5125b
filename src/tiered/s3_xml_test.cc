#include "tiered/s3_xml.h"

#include <gtest/gtest.h>

#include "tiered/aws_credentials.h"

namespace strata::tiered::s3 {
namespace {

TEST(S3Xml, ParsesAListPage) {
  auto page = ParseListPage(
      R"(<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>b</Name>
<Prefix>p/</Prefix><KeyCount>3</KeyCount><IsTruncated>true</IsTruncated>
<NextContinuationToken>p/d/</NextContinuationToken>
<Contents><Key>p/a&amp;b.log</Key><LastModified>2026-12-07T11:12:16.250Z</LastModified>
<Size>22</Size></Contents><Contents><Key>p/c</Key><LastModified>2026-12-07T11:12:16Z</LastModified>
<Size>0</Size></Contents><CommonPrefixes><Prefix>p/d/</Prefix></CommonPrefixes></ListBucketResult>)");
  ASSERT_TRUE(page.ok()) << page.error().message;
  ASSERT_EQ(page->objects.size(), 2u);
  EXPECT_EQ(page->objects[0].key, "p/a&b.log");
  EXPECT_EQ(page->objects[0].size, 22u);
  EXPECT_EQ(page->objects[0].last_modified_ms, 1796641936250);
  EXPECT_EQ(page->objects[1].last_modified_ms, 1796641936000);
  EXPECT_EQ(page->common_prefixes, std::vector<std::string>{"p/d/"});
  EXPECT_TRUE(page->truncated);
  EXPECT_EQ(page->next_continuation_token, "p/d/");
}

TEST(S3Xml, RefusesWhatIsNotTheExpectedReply) {
  EXPECT_EQ(ParseListPage("<html>busy</html>").error().code, Errc::kIoError);
  EXPECT_EQ(ParseListPage("<ListBucketResult><Contents>").error().code, Errc::kIoError);
  EXPECT_EQ(ParseListPage("").error().code, Errc::kIoError);
  EXPECT_EQ(ParseListPage("<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>")
                .error()
                .code,
            Errc::kIoError);  // truncated without a token would list forever
  EXPECT_EQ(ParseUploadId("<InitiateMultipartUploadResult/>").error().code, Errc::kIoError);
  EXPECT_TRUE(ParseError("not xml").code.empty());
}

TEST(S3Xml, ParsesErrorsUploadsAndDeleteResults) {
  ErrorDocument e = ParseError(
      "<Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>");
  EXPECT_EQ(e.code, "NoSuchKey");
  EXPECT_EQ(e.message, "The specified key does not exist.");
  EXPECT_EQ(*ParseUploadId("<InitiateMultipartUploadResult><Bucket>b</Bucket><UploadId>u-1"
                           "</UploadId></InitiateMultipartUploadResult>"),
            "u-1");
  auto uploads = ParseUploadsPage(
      "<ListMultipartUploadsResult><IsTruncated>false</IsTruncated><Upload><Key>p/k</Key>"
      "<UploadId>u-2</UploadId><Initiated>2026-12-07T11:00:00.000Z</Initiated></Upload>"
      "</ListMultipartUploadsResult>");
  ASSERT_TRUE(uploads.ok());
  ASSERT_EQ(uploads->uploads.size(), 1u);
  EXPECT_EQ(uploads->uploads[0].upload_id, "u-2");
  auto deleted = ParseDeleteResult(
      "<DeleteResult><Deleted><Key>a</Key></Deleted><Error><Key>b</Key><Code>AccessDenied</Code>"
      "<Message>no</Message></Error></DeleteResult>");
  ASSERT_TRUE(deleted.ok());
  ASSERT_EQ(deleted->size(), 1u);
  EXPECT_EQ((*deleted)[0].key, "b");
  EXPECT_EQ((*deleted)[0].code, "AccessDenied");
}

TEST(S3Xml, WritesBodiesWithKeysEscaped) {
  EXPECT_EQ(DeleteObjectsBody({"a<b", "c"}),
            "<Delete><Quiet>true</Quiet><Object><Key>a&lt;b</Key></Object><Object><Key>c</Key>"
            "</Object></Delete>");
  EXPECT_EQ(CompleteMultipartBody({{1, "\"e1\""}, {2, "\"e2\""}}),
            "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>&quot;e1&quot;</ETag>"
            "</Part><Part><PartNumber>2</PartNumber><ETag>&quot;e2&quot;</ETag></Part>"
            "</CompleteMultipartUpload>");
}

TEST(AwsCredentials, ParsesTheSharedFileByProfile) {
  const char* text =
      "# comment\n[default]\naws_access_key_id = AK1\naws_secret_access_key=SK1\n\n"
      "[prod] \n; other\naws_access_key_id=AK2\r\naws_secret_access_key = SK2\n"
      "aws_session_token = TOKEN\n[partial]\naws_access_key_id=AK3\n";
  auto def = ParseAwsCredentialsFile(text, "default");
  ASSERT_TRUE(def.ok());
  EXPECT_EQ(def->access_key_id, "AK1");
  EXPECT_EQ(def->secret_access_key, "SK1");
  EXPECT_TRUE(def->session_token.empty());
  auto prod = ParseAwsCredentialsFile(text, "prod");
  ASSERT_TRUE(prod.ok());
  EXPECT_EQ(prod->access_key_id, "AK2");
  EXPECT_EQ(prod->secret_access_key, "SK2");
  EXPECT_EQ(prod->session_token, "TOKEN");
  EXPECT_EQ(ParseAwsCredentialsFile(text, "partial").error().code, Errc::kNotFound);
  EXPECT_EQ(ParseAwsCredentialsFile(text, "none").error().code, Errc::kNotFound);
}

}  // namespace
}  // namespace strata::tiered::s3
