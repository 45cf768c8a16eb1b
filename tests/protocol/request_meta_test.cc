// KeepUsedMeta: a request's _meta shrinks to the keys keel reads, each bounded; the rest of
// whatever the client sent is gone.
#include "protocol/request_meta.h"

#include <string>

#include <catch2/catch.hpp>

namespace keel::request_meta_test {
namespace {

Json Bulk(int n) {
  Json bulk = Json::array();
  for (int i = 0; i < n; ++i) bulk.push_back(i);
  return bulk;
}

}  // namespace

TEST_CASE("KeepUsedMeta keeps the keys keel reads and drops every other") {
  Json meta = {{"progressToken", 7},
               {"dev.keel/idempotency-key", "k-1"},
               {"traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"},
               {"bulk", Bulk(100000)},
               {"io.modelcontextprotocol/related-task", {{"taskId", "t"}}}};
  REQUIRE_FALSE(KeepUsedMeta(meta));
  CHECK(meta == Json{{"progressToken", 7},
                     {"dev.keel/idempotency-key", "k-1"},
                     {"traceparent", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}});

  Json unused = {{"vendor/x", Bulk(10)}};
  REQUIRE_FALSE(KeepUsedMeta(unused));
  CHECK(unused == Json::object());
  Json not_object = Bulk(10);
  REQUIRE_FALSE(KeepUsedMeta(not_object));
  CHECK(not_object.is_null());
}

TEST_CASE("a kept key larger than its bound is a problem naming it and meta is left as it was") {
  Json meta = {{"traceparent", std::string(kMaxMetaValueBytes, 'x')}, {"other", 1}};
  const Json before = meta;
  const auto problem = KeepUsedMeta(meta);
  REQUIRE(problem);
  CHECK(*problem == "_meta.traceparent is larger than 1024 bytes");
  CHECK(meta == before);
  // Exactly at the bound is fine: the quotes count.
  Json fits = {{"dev.keel/idempotency-key", std::string(kMaxMetaValueBytes - 2, 'k')}};
  CHECK_FALSE(KeepUsedMeta(fits));
  Json structured = {{"dev.keel/idempotency-key", Json{{"a", Bulk(100000)}}}};
  CHECK(KeepUsedMeta(structured) == "_meta.dev.keel/idempotency-key is larger than 1024 bytes");
}

TEST_CASE("a progress token may be a string or any number or null and nothing else") {
  for (const Json& token : {Json("p"), Json(7), Json(1.5), Json(-2.25), Json(nullptr)}) {
    Json meta = {{"progressToken", token}};
    CHECK_FALSE(KeepUsedMeta(meta));
    CHECK(meta["progressToken"] == token);
  }
  Json boolean = {{"progressToken", true}};
  CHECK(KeepUsedMeta(boolean) == "_meta.progressToken must be a string or a number, got boolean");
  Json object = {{"progressToken", {{"a", 1}}}};
  CHECK(KeepUsedMeta(object) == "_meta.progressToken must be a string or a number, got object");
  Json array = {{"progressToken", Json::array({7})}};
  CHECK(KeepUsedMeta(array) == "_meta.progressToken must be a string or a number, got array");
}

TEST_CASE("EncodedSizeUpTo measures compact JSON and stops counting past its limit") {
  CHECK(EncodedSizeUpTo(Json("abc"), 100) == 5);
  CHECK(EncodedSizeUpTo(Json::array(), 100) == 2);
  CHECK(EncodedSizeUpTo(Json{{"ab", "c"}, {"d", nullptr}}, 100) == 19);  // {"ab":"c","d":null}
  const size_t huge = EncodedSizeUpTo(Bulk(1000000), 1000);
  CHECK(huge > 1000);
  CHECK(huge < 1100);  // stopped within one element of the limit, not 25 MB later
}

}  // namespace keel::request_meta_test
