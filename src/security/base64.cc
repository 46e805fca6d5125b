// Base64Encode / Base64Decode.
#include "security/base64.h"

#include <array>

namespace strata::security {
namespace {

constexpr std::string_view kBase64Alphabet =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// Byte -> 6-bit value, -1 for bytes outside the alphabet.
constexpr std::array<int8_t, 256> MakeBase64DecodeTable() {
  std::array<int8_t, 256> table{};
  for (auto& v : table) v = -1;
  for (size_t i = 0; i < kBase64Alphabet.size(); ++i) {
    table[static_cast<uint8_t>(kBase64Alphabet[i])] = static_cast<int8_t>(i);
  }
  return table;
}
constexpr std::array<int8_t, 256> kBase64DecodeTable = MakeBase64DecodeTable();

}  // namespace

std::string Base64Encode(ByteView data) {
  std::string out;
  out.reserve((data.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= data.size(); i += 3) {
    uint32_t v = uint32_t(data[i]) << 16 | uint32_t(data[i + 1]) << 8 | data[i + 2];
    for (int shift = 18; shift >= 0; shift -= 6) out.push_back(kBase64Alphabet[(v >> shift) & 63]);
  }
  size_t rest = data.size() - i;
  if (rest > 0) {
    uint32_t v = uint32_t(data[i]) << 16 | (rest == 2 ? uint32_t(data[i + 1]) << 8 : 0);
    out.push_back(kBase64Alphabet[(v >> 18) & 63]);
    out.push_back(kBase64Alphabet[(v >> 12) & 63]);
    out.push_back(rest == 2 ? kBase64Alphabet[(v >> 6) & 63] : '=');
    out.push_back('=');
  }
  return out;
}

std::optional<Bytes> Base64Decode(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  size_t padding = 0;
  while (padding < 2 && padding < text.size() && text[text.size() - 1 - padding] == '=') {
    ++padding;
  }
  Bytes out;
  out.reserve(text.size() / 4 * 3);
  uint32_t acc = 0;
  size_t data_chars = text.size() - padding;
  for (size_t i = 0; i < data_chars; ++i) {
    int8_t v = kBase64DecodeTable[static_cast<uint8_t>(text[i])];
    if (v < 0) return std::nullopt;  // also a '=' before the end
    acc = acc << 6 | uint32_t(v);
    if (i % 4 == 3) {
      out.push_back(uint8_t(acc >> 16));
      out.push_back(uint8_t(acc >> 8));
      out.push_back(uint8_t(acc));
      acc = 0;
    }
  }
  // The last group: 2 characters carry one byte, 3 carry two.
  if (padding == 2) {
    out.push_back(uint8_t(acc >> 4));
  } else if (padding == 1) {
    out.push_back(uint8_t(acc >> 10));
    out.push_back(uint8_t(acc >> 2));
  }
  return out;
}

}  // namespace strata::security
