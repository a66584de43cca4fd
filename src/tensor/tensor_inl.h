#pragma once
// Template members of Tensor (included at the end of tensor.h).
#include <cstring>
#include <type_traits>

#include "base/error.h"

namespace lg {

template <class T>
constexpr DType dtype_of() {
  if constexpr (std::is_same_v<T, bool>)
    return dtypes::boolean;
  else if constexpr (std::is_same_v<T, int8_t>)
    return dtypes::int8;
  else if constexpr (std::is_same_v<T, uint8_t>)
    return dtypes::uint8;
  else if constexpr (std::is_same_v<T, int16_t>)
    return dtypes::int16;
  else if constexpr (std::is_same_v<T, uint16_t>)
    return dtypes::uint16;
  else if constexpr (std::is_same_v<T, int32_t>)
    return dtypes::int32;
  else if constexpr (std::is_same_v<T, uint32_t>)
    return dtypes::uint32;
  else if constexpr (std::is_same_v<T, int64_t>)
    return dtypes::int64;
  else if constexpr (std::is_same_v<T, uint64_t>)
    return dtypes::uint64;
  else if constexpr (std::is_same_v<T, float>)
    return dtypes::float32;
  else if constexpr (std::is_same_v<T, double>)
    return dtypes::float64;
  else
    static_assert(sizeof(T) == 0, "no lazygrad dtype for this C++ type");
}

template <class T>
Tensor Tensor::from_vector(const std::vector<T>& v, const Shape& shape, const std::string& device) {
  if constexpr (std::is_same_v<T, bool>) {
    std::vector<uint8_t> bytes(v.begin(), v.end());
    return from_bytes(bytes.data(), bytes.size(), shape, dtypes::boolean, device);
  } else {
    return from_bytes(v.data(), v.size() * sizeof(T), shape, dtype_of<T>(), device);
  }
}

template <class T>
std::vector<T> Tensor::to_vector() const {
  LG_USER_CHECK(dtype() == dtype_of<T>(), "to_vector: tensor is ", name(dtype()), ", asked for ",
                name(dtype_of<T>()), "; cast() first or use to_doubles()");
  std::vector<uint8_t> bytes = to_host();
  std::vector<T> out(static_cast<size_t>(numel()));
  if constexpr (std::is_same_v<T, bool>) {
    for (size_t i = 0; i < out.size(); i++) out[i] = bytes[i] != 0;
  } else {
    std::memcpy(out.data(), bytes.data(), bytes.size());
  }
  return out;
}

}  // namespace lg
