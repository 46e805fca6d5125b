#include "security/base64url.h"

#include <array>

namespace strata::security {

// Named so that a unity build of the module never merges these with
// another file's helpers.
namespace base64url_impl {
namespace {

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

// 0..63 for a character of the alphabet, -1 for anything else.
constexpr std::array<int8_t, 256> MakeDecodeTable() {
  std::array<int8_t, 256> t{};
  for (auto& v : t) v = -1;
  for (int i = 0; i < 64; ++i) t[static_cast<uint8_t>(kAlphabet[i])] = static_cast<int8_t>(i);
  return t;
}
constexpr std::array<int8_t, 256> kDecode = MakeDecodeTable();

}  // namespace
}  // namespace base64url_impl

std::string Base64UrlEncode(ByteView data) {
  std::string out;
  out.reserve((data.size() * 4 + 2) / 3);
  size_t i = 0;
  for (; i + 3 <= data.size(); i += 3) {
    uint32_t v = uint32_t(data[i]) << 16 | uint32_t(data[i + 1]) << 8 | data[i + 2];
    for (int shift : {18, 12, 6, 0}) out.push_back(base64url_impl::kAlphabet[(v >> shift) & 63]);
  }
  size_t rest = data.size() - i;
  if (rest == 1) {
    uint32_t v = uint32_t(data[i]) << 16;
    for (int shift : {18, 12}) out.push_back(base64url_impl::kAlphabet[(v >> shift) & 63]);
  } else if (rest == 2) {
    uint32_t v = uint32_t(data[i]) << 16 | uint32_t(data[i + 1]) << 8;
    for (int shift : {18, 12, 6}) out.push_back(base64url_impl::kAlphabet[(v >> shift) & 63]);
  }
  return out;
}

Result<Bytes> Base64UrlDecode(std::string_view text) {
  if (text.size() % 4 == 1) {
    return MakeError(Errc::kInvalidArgument,
                     "invalid base64url: length " + std::to_string(text.size()) + " is impossible");
  }
  Bytes out;
  out.reserve(text.size() * 3 / 4);
  uint32_t acc = 0;
  int bits = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    int8_t v = base64url_impl::kDecode[static_cast<uint8_t>(text[i])];
    if (v < 0) {
      return MakeError(Errc::kInvalidArgument,
                       "invalid base64url: unexpected character at position " + std::to_string(i));
    }
    acc = (acc << 6) | uint32_t(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<uint8_t>(acc >> bits));
      acc &= (1u << bits) - 1;
    }
  }
  if (acc != 0)
    return MakeError(Errc::kInvalidArgument, "invalid base64url: non-zero trailing bits");
  return out;
}

}  // namespace strata::security
