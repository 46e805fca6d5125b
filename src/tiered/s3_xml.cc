#include "tiered/s3_xml.h"

#include <expat.h>
#include <fmt/format.h>

#include <charconv>
#include <ctime>
#include <memory>

namespace strata::tiered::s3 {
namespace {

// An element with its text and children: S3's replies are small and shallow, so a tree is the
// simplest thing to read them from.
struct Node {
  std::string name;  // local name (any namespace prefix dropped)
  std::string text;
  std::vector<std::unique_ptr<Node>> children;

  const Node* Child(std::string_view n) const {
    for (const auto& c : children) {
      if (c->name == n) return c.get();
    }
    return nullptr;
  }
  std::string ChildText(std::string_view n) const {
    const Node* c = Child(n);
    return c == nullptr ? std::string() : c->text;
  }
};

struct TreeBuilder {
  std::unique_ptr<Node> root;
  std::vector<Node*> open;
};

std::string LocalName(const char* name) {
  std::string_view n(name);
  const size_t colon = n.rfind(':');  // expat without namespaces keeps "ns:Name"
  return std::string(colon == std::string_view::npos ? n : n.substr(colon + 1));
}

void OnStart(void* ud, const XML_Char* name, const XML_Char**) {
  auto* b = static_cast<TreeBuilder*>(ud);
  auto node = std::make_unique<Node>();
  node->name = LocalName(name);
  Node* raw = node.get();
  if (b->open.empty()) {
    b->root = std::move(node);
  } else {
    b->open.back()->children.push_back(std::move(node));
  }
  b->open.push_back(raw);
}

void OnEnd(void* ud, const XML_Char*) {
  auto* b = static_cast<TreeBuilder*>(ud);
  if (!b->open.empty()) b->open.pop_back();
}

void OnText(void* ud, const XML_Char* s, int len) {
  auto* b = static_cast<TreeBuilder*>(ud);
  if (!b->open.empty()) b->open.back()->text.append(s, size_t(len));
}

Result<std::unique_ptr<Node>> Parse(std::string_view body, std::string_view root_name) {
  std::unique_ptr<XML_ParserStruct, void (*)(XML_Parser)> parser(XML_ParserCreate("UTF-8"),
                                                                 XML_ParserFree);
  if (!parser) return MakeError(Errc::kIoError, "cannot create an XML parser");
  TreeBuilder builder;
  XML_SetUserData(parser.get(), &builder);
  XML_SetElementHandler(parser.get(), OnStart, OnEnd);
  XML_SetCharacterDataHandler(parser.get(), OnText);
  if (XML_Parse(parser.get(), body.data(), int(body.size()), XML_TRUE) == XML_STATUS_ERROR) {
    return MakeError(Errc::kIoError, fmt::format("S3 reply is not XML ({} at line {}): {:.200}",
                                                 XML_ErrorString(XML_GetErrorCode(parser.get())),
                                                 XML_GetCurrentLineNumber(parser.get()), body));
  }
  if (!builder.root || builder.root->name != root_name) {
    return MakeError(Errc::kIoError, fmt::format("S3 reply is not a {}: {:.200}", root_name, body));
  }
  return std::move(builder.root);
}

uint64_t ToU64(const std::string& s) {
  uint64_t v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

std::string Escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&apos;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

}  // namespace

ErrorDocument ParseError(std::string_view body) {
  auto doc = Parse(body, "Error");
  if (!doc.ok()) return {};
  return ErrorDocument{(*doc)->ChildText("Code"), (*doc)->ChildText("Message")};
}

Result<ListPage> ParseListPage(std::string_view body) {
  STRATA_ASSIGN_OR_RETURN(auto doc, Parse(body, "ListBucketResult"));
  ListPage page;
  for (const auto& c : doc->children) {
    if (c->name == "Contents") {
      ListedObject o;
      o.key = c->ChildText("Key");
      o.size = ToU64(c->ChildText("Size"));
      o.last_modified_ms = ParseIsoTimeMs(c->ChildText("LastModified"));
      if (o.key.empty()) return MakeError(Errc::kIoError, "S3 list entry without a Key");
      page.objects.push_back(std::move(o));
    } else if (c->name == "CommonPrefixes") {
      page.common_prefixes.push_back(c->ChildText("Prefix"));
    }
  }
  page.truncated = doc->ChildText("IsTruncated") == "true";
  page.next_continuation_token = doc->ChildText("NextContinuationToken");
  if (page.truncated && page.next_continuation_token.empty()) {
    return MakeError(Errc::kIoError, "S3 list is truncated but has no NextContinuationToken");
  }
  return page;
}

Result<UploadsPage> ParseUploadsPage(std::string_view body) {
  STRATA_ASSIGN_OR_RETURN(auto doc, Parse(body, "ListMultipartUploadsResult"));
  UploadsPage page;
  for (const auto& c : doc->children) {
    if (c->name != "Upload") continue;
    page.uploads.push_back(MultipartUpload{c->ChildText("Key"), c->ChildText("UploadId"),
                                           ParseIsoTimeMs(c->ChildText("Initiated"))});
  }
  page.truncated = doc->ChildText("IsTruncated") == "true";
  page.next_key_marker = doc->ChildText("NextKeyMarker");
  page.next_upload_id_marker = doc->ChildText("NextUploadIdMarker");
  return page;
}

Result<std::string> ParseUploadId(std::string_view body) {
  STRATA_ASSIGN_OR_RETURN(auto doc, Parse(body, "InitiateMultipartUploadResult"));
  std::string id = doc->ChildText("UploadId");
  if (id.empty()) return MakeError(Errc::kIoError, "S3 multipart upload started without an id");
  return id;
}

Result<std::vector<DeleteFailure>> ParseDeleteResult(std::string_view body) {
  STRATA_ASSIGN_OR_RETURN(auto doc, Parse(body, "DeleteResult"));
  std::vector<DeleteFailure> failures;
  for (const auto& c : doc->children) {
    if (c->name != "Error") continue;
    failures.push_back(
        DeleteFailure{c->ChildText("Key"), c->ChildText("Code"), c->ChildText("Message")});
  }
  return failures;
}

std::string CompleteMultipartBody(const std::vector<std::pair<int, std::string>>& parts) {
  std::string out = "<CompleteMultipartUpload>";
  for (const auto& [number, etag] : parts) {
    out += fmt::format("<Part><PartNumber>{}</PartNumber><ETag>{}</ETag></Part>", number,
                       Escape(etag));
  }
  out += "</CompleteMultipartUpload>";
  return out;
}

std::string DeleteObjectsBody(const std::vector<std::string>& keys) {
  std::string out = "<Delete><Quiet>true</Quiet>";
  for (const std::string& key : keys) out += "<Object><Key>" + Escape(key) + "</Key></Object>";
  out += "</Delete>";
  return out;
}

int64_t ParseIsoTimeMs(std::string_view iso) {
  std::tm tm{};
  int ms = 0;
  const std::string s(iso);
  if (std::sscanf(s.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &tm.tm_sec) != 6) {
    return 0;
  }
  const size_t dot = s.find('.');
  if (dot != std::string::npos) {
    std::sscanf(s.c_str() + dot + 1, "%3d", &ms);
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  return int64_t(timegm(&tm)) * 1000 + ms;
}

}  // namespace strata::tiered::s3
