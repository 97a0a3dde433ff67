#pragma once
// A page-aligned, uninitialised array: what O_DIRECT I/O needs, and what keeps streaming kernels
// from splitting vectors across cache lines.
#include <cstddef>
#include <cstdlib>
#include <memory>
#include <new>

namespace luwu::validation {

inline constexpr std::size_t kPageBytes = 4096;

template <typename T>
class AlignedBuffer {
 public:
  AlignedBuffer() = default;
  explicit AlignedBuffer(std::size_t count) : count_(count) {
    const std::size_t bytes = (count * sizeof(T) + kPageBytes - 1) / kPageBytes * kPageBytes;
    data_.reset(static_cast<T*>(std::aligned_alloc(kPageBytes, bytes == 0 ? kPageBytes : bytes)));
    if (!data_) throw std::bad_alloc();
  }
  T* data() { return data_.get(); }
  const T* data() const { return data_.get(); }
  std::size_t size() const { return count_; }
  T& operator[](std::size_t i) { return data_.get()[i]; }
  const T& operator[](std::size_t i) const { return data_.get()[i]; }

 private:
  struct Free {
    void operator()(T* p) const { std::free(p); }
  };
  std::unique_ptr<T, Free> data_;
  std::size_t count_ = 0;
};

}  // namespace luwu::validation
