// Unit tests for ledger/sha256.h against the FIPS 180-4 examples and digests from an
// independent implementation (Python's hashlib), at every padding boundary.
#include "ledger/sha256.h"

#include <string>

#include <catch2/catch.hpp>

#include "protocol/hex.h"

namespace sha256_test {

using keel::Sha256Hex;

TEST_CASE("SHA-256 matches the FIPS 180-4 examples", "[ledger][IDEM-2]") {
  CHECK(Sha256Hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  CHECK(Sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(Sha256Hex(std::string(1000000, 'a')) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("SHA-256 pads correctly at every block boundary", "[ledger][IDEM-2]") {
  // 55 bytes: the length still fits the last block; 56 and 63: it needs a second block;
  // 64 and 119: a whole block, then the tail.
  CHECK(Sha256Hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(Sha256Hex(std::string(55, 'a')) ==
        "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318");
  CHECK(Sha256Hex(std::string(56, 'a')) ==
        "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a");
  CHECK(Sha256Hex(std::string(63, 'a')) ==
        "7d3e74a05d7db15bce4ad9ec0658ea98e3f06eeecf16b4c6fff2da457ddc2f34");
  CHECK(Sha256Hex(std::string(64, 'a')) ==
        "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb");
  CHECK(Sha256Hex(std::string(119, 'a')) ==
        "31eba51c313a5c08226adf18d4a359cfdfd8d2e816b13f4af952f7ea6584dcfb");
}

TEST_CASE("SHA-256 hashes every byte value, NUL included", "[ledger][IDEM-2]") {
  std::string bytes;
  for (int round = 0; round < 3; ++round) {
    for (int b = 0; b < 256; ++b) bytes += static_cast<char>(b);
  }
  CHECK(Sha256Hex(bytes) == "f3a25aa93aa2fbba28d79260535bbd6a5eb0fc1c24a8b0f04e12b484c1dfe363");
}

}  // namespace sha256_test

namespace sha256_test {

std::string Hex(const keel::Sha256Digest& digest) {
  return keel::HexEncode(
      std::string_view(reinterpret_cast<const char*>(digest.data()), digest.size()));
}

TEST_CASE("HMAC-SHA-256 matches RFC 4231, a key longer than a block included", "[ledger][MRTR-1]") {
  CHECK(Hex(keel::HmacSha256(std::string(20, '\x0b'), "Hi There")) ==
        "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  CHECK(Hex(keel::HmacSha256("Jefe", "what do ya want for nothing?")) ==
        "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  CHECK(Hex(keel::HmacSha256(std::string(131, '\xaa'),
                             "Test Using Larger Than Block-Size Key - Hash Key First")) ==
        "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
  // A key of exactly one block is used as it is (Python's hmac, independently).
  CHECK(Hex(keel::HmacSha256(std::string(64, 'k'), "")) ==
        "83026a325aaee70e36cfe607536aa1054104ad1077c36134810d4ccded1ccd3b");
}

}  // namespace sha256_test
