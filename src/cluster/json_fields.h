#pragma once
// Strict JSON field access for the records Strata stores or publishes as
// JSON (cluster metadata records, the balancer's load samples): a field
// of the wrong type, an integer out of range or a missing required field
// throws std::invalid_argument (or json's out_of_range) naming the field,
// and Decode turns any of them into kCorrupt. nlohmann's get<T>() alone
// would take 1.5, true or 2^32 + 1 for an int32 and truncate them.
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>

#include "base/result.h"

namespace strata::cluster::json_fields {

using nlohmann::json;

// `v` (the value of `field`) as T; throws naming the field. An integer must
// be a JSON integer in T's range: get<T>() alone would take 1.5, true or
// 2^32 + 1 and truncate them.
template <typename T>
T As(const json& v, const std::string& field) {
  if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
    bool fits = v.is_number_unsigned()
                    ? std::in_range<T>(v.get<uint64_t>())
                    : v.is_number_integer() && std::in_range<T>(v.get<int64_t>());
    if (!fits) {
      throw std::invalid_argument("'" + field + "' is not a " + std::to_string(sizeof(T) * 8) +
                                  "-bit integer: " + v.dump());
    }
    return v.get<T>();
  } else {
    try {
      return v.get<T>();
    } catch (const json::exception& e) {
      throw std::invalid_argument("'" + field + "': " + e.what());
    }
  }
}

// A required field (out_of_range naming it when missing), or an optional one.
template <typename T>
T Field(const json& doc, const char* field) {
  return As<T>(doc.at(field), field);
}
template <typename T>
T Field(const json& doc, const char* field, T fallback) {
  return doc.contains(field) ? As<T>(doc.at(field), field) : fallback;
}

// A required field that must be a JSON array, or object.
inline const json& Array(const json& doc, const char* field) {
  const json& v = doc.at(field);
  if (!v.is_array()) throw std::invalid_argument(std::string("'") + field + "' is not an array");
  return v;
}
inline const json& Object(const json& doc, const char* field) {
  const json& v = doc.at(field);
  if (!v.is_object()) throw std::invalid_argument(std::string("'") + field + "' is not an object");
  return v;
}

// Runs `decode` on the parsed value; any parse or type error becomes kCorrupt
// naming the record kind and what was wrong.
template <typename T, typename F>
Result<T> Decode(const char* kind, const std::string& value, F decode) {
  try {
    return decode(json::parse(value));
  } catch (const std::exception& e) {
    return MakeError(Errc::kCorrupt, std::string(kind) + " record: " + e.what());
  }
}

}  // namespace strata::cluster::json_fields
