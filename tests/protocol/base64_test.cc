// Unit tests for protocol/base64.h: the encoding of a resource's binary blob.
#include "protocol/base64.h"

#include <string>

#include <catch2/catch.hpp>

#include "protocol/http_headers.h"

namespace base64_test {

TEST_CASE("Base64Encode gives the RFC 4648 test vectors", "[base64]") {
  CHECK(keel::Base64Encode("") == "");
  CHECK(keel::Base64Encode("f") == "Zg==");
  CHECK(keel::Base64Encode("fo") == "Zm8=");
  CHECK(keel::Base64Encode("foo") == "Zm9v");
  CHECK(keel::Base64Encode("foob") == "Zm9vYg==");
  CHECK(keel::Base64Encode("fooba") == "Zm9vYmE=");
  CHECK(keel::Base64Encode("foobar") == "Zm9vYmFy");
}

TEST_CASE("Base64Encode round-trips every byte value through DecodeBase64", "[base64]") {
  std::string all;
  for (int b = 0; b < 256; ++b) all += static_cast<char>(b);
  for (size_t len : {size_t{0}, size_t{1}, size_t{2}, size_t{3}, size_t{255}, size_t{256}}) {
    const std::string bytes = all.substr(0, len);
    const std::string text = keel::Base64Encode(bytes);
    CHECK(text.size() % 4 == 0);
    CHECK(keel::DecodeBase64(text) == bytes);
  }
}

}  // namespace base64_test
