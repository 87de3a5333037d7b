//===- WeightsFileTest.cpp - The .fp8w reader and writer ------------------===//
//
// Part of fp8-opt. The hash against LLVM's XXH64 (an independent
// implementation of the same published algorithm), and the writer/reader
// round trip; the bad-file cases are lit tests (test/Tools/weights-file*).
//
//===----------------------------------------------------------------------===//

#include "fp8rt/fp8rt.h"
#include "fp8rt/fp8w.h"

#include "llvm/Support/xxhash.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <random>
#include <string>
#include <unistd.h>
#include <vector>

namespace {

TEST(WeightsFile, HashIsXXH64) {
  std::mt19937_64 rng(7);
  std::vector<uint8_t> data(5000);
  for (uint8_t &b : data)
    b = static_cast<uint8_t>(rng());
  for (size_t n : {0, 1, 3, 4, 7, 8, 31, 32, 33, 63, 64, 100, 1000, 5000}) {
    uint64_t want = llvm::xxHash64(llvm::ArrayRef<uint8_t>(data.data(), n));
    EXPECT_EQ(fp8w_hash_bytes(data.data(), n), want) << n << " bytes";
    // Streamed in uneven pieces: the same digest.
    fp8w_hash h;
    fp8w_hash_init(&h);
    for (size_t at = 0, step = 1; at < n; at += step, step = step * 3 % 37 + 1)
      fp8w_hash_update(&h, data.data() + at, std::min(step, n - at));
    EXPECT_EQ(fp8w_hash_digest(&h), want) << n << " bytes, streamed";
  }
}

struct TempFile {
  std::string path;
  int fd;
  TempFile() {
    char name[] = "/tmp/fp8w-test-XXXXXX";
    fd = mkstemp(name);
    path = name;
  }
  ~TempFile() {
    if (fd >= 0)
      close(fd);
    unlink(path.c_str());
  }
};

TEST(WeightsFile, RoundTrip) {
  TempFile file;
  ASSERT_GE(file.fd, 0);
  std::vector<float> a(1000);
  for (size_t i = 0; i < a.size(); ++i)
    a[i] = float(i) * 0.5f;
  std::vector<uint8_t> b(77, 0x3c), empty;
  const int64_t dimsA[] = {10, 100}, dimsB[] = {7, 11}, dimsC[] = {0, 4};
  fp8w_tensor_desc tensors[] = {
      {"layer.weight", 12, FP8RT_FLOAT, 2, dimsA},
      {"layer.weight_fp8", 16, FP8RT_FLOAT8E4M3FN, 2, dimsB},
      {"nothing", 7, FP8RT_FLOAT16, 2, dimsC},
  };
  char error[512];
  fp8w_writer *w =
      fp8w_writer_create(file.fd, 0x1234, tensors, 3, error, sizeof(error));
  ASSERT_NE(w, nullptr) << error;
  EXPECT_EQ(fp8w_writer_offset(w, 0) % FP8W_ALIGNMENT, 0u);
  EXPECT_EQ(fp8w_writer_offset(w, 1) % FP8W_ALIGNMENT, 0u);
  // In pieces that straddle the tensors.
  ASSERT_EQ(fp8w_writer_write(w, a.data(), 1000), 0);
  ASSERT_EQ(fp8w_writer_write(w, reinterpret_cast<char *>(a.data()) + 1000,
                              3000),
            0);
  ASSERT_EQ(fp8w_writer_write(w, b.data(), b.size()), 0);
  ASSERT_EQ(fp8w_writer_finish(w, error, sizeof(error)), 0) << error;

  fp8w_file *f = fp8w_open(file.path.c_str(), 0x1234, FP8W_VERIFY_DATA, error,
                           sizeof(error));
  ASSERT_NE(f, nullptr) << error;
  EXPECT_EQ(fp8w_num_tensors(f), 3u);
  int64_t i = fp8w_find(f, "layer.weight_fp8", 16);
  ASSERT_EQ(i, 1);
  EXPECT_EQ(fp8w_entry_at(f, i)->bytes, 77u);
  EXPECT_EQ(0, memcmp(fp8w_data(f, i), b.data(), 77));
  EXPECT_EQ(reinterpret_cast<uintptr_t>(fp8w_data(f, 0)) % FP8W_ALIGNMENT, 0u);
  EXPECT_EQ(0, memcmp(fp8w_data(f, 0), a.data(), 4000));
  EXPECT_EQ(fp8w_find(f, "layer", 5), -1);
  EXPECT_EQ(fp8w_find(f, "nothing", 7), 2);
  fp8w_close(f);

  // Another fingerprint: refused, naming the file.
  EXPECT_EQ(fp8w_open(file.path.c_str(), 0x9999, 0, error, sizeof(error)),
            nullptr);
  EXPECT_NE(std::string(error).find("belongs to another model"),
            std::string::npos)
      << error;
}

TEST(WeightsFile, WriterRefusesBadInput) {
  TempFile file;
  char error[512];
  const int64_t dims[] = {4};
  fp8w_tensor_desc same[] = {{"w", 1, FP8RT_FLOAT, 1, dims},
                             {"w", 1, FP8RT_FLOAT, 1, dims}};
  EXPECT_EQ(fp8w_writer_create(file.fd, 1, same, 2, error, sizeof(error)),
            nullptr);
  EXPECT_NE(std::string(error).find("two tensors are named 'w'"),
            std::string::npos);
  fp8w_tensor_desc bad[] = {{"w", 1, 99, 1, dims}};
  EXPECT_EQ(fp8w_writer_create(file.fd, 1, bad, 1, error, sizeof(error)),
            nullptr);
  // Too few bytes: finish says which tensor.
  fp8w_tensor_desc one[] = {{"w", 1, FP8RT_FLOAT, 1, dims}};
  fp8w_writer *w = fp8w_writer_create(file.fd, 1, one, 1, error, sizeof(error));
  ASSERT_NE(w, nullptr);
  float x[3] = {1, 2, 3};
  ASSERT_EQ(fp8w_writer_write(w, x, sizeof(x)), 0);
  EXPECT_NE(fp8w_writer_finish(w, error, sizeof(error)), 0);
  EXPECT_NE(std::string(error).find("tensor 'w' got 12 of its 16 bytes"),
            std::string::npos)
      << error;
}

} // namespace
