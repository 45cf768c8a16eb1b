// Unit tests for protocol/uri_template.h: RFC 6570 parsing, expansion (the RFC's own
// examples) and keel's matching rule for resource templates.
#include "protocol/uri_template.h"

#include <string>
#include <vector>

#include <catch2/catch.hpp>

using keel::UriTemplate;

namespace uri_template_test {

UriTemplate Parsed(const std::string& text) {
  std::string error;
  std::optional<UriTemplate> parsed = UriTemplate::Parse(text, &error);
  INFO(text << ": " << error);
  REQUIRE(parsed);
  return *parsed;
}

std::string ParseError(const std::string& text) {
  std::string error;
  CHECK_FALSE(UriTemplate::Parse(text, &error));
  return error;
}

// RFC 6570 §3.2's example variables (the string ones).
const UriTemplate::Values kRfcValues = {
    {"var", "value"},     {"hello", "Hello World!"},
    {"path", "/foo/bar"}, {"empty", ""},
    {"x", "1024"},        {"y", "768"},
    {"half", "50%"},      {"base", "http://example.com/home/"},
    {"who", "fred"},      {"v", "6"},
};

TEST_CASE("a malformed template is refused with a message naming the fault and its offset",
          "[uri_template]") {
  CHECK(ParseError("test://{id") == "unclosed '{' at offset 7");
  CHECK(ParseError("a{b{c}") == "unclosed '{' at offset 1");
  CHECK(ParseError("a}b") == "'}' outside an expression at offset 1");
  CHECK(ParseError("x{}") == "empty expression at offset 1");
  CHECK(ParseError("{=var}") == "unsupported operator '=' (reserved by RFC 6570) at offset 0");
  CHECK(ParseError("{|var}").find("unsupported operator '|'") == 0);
  CHECK(ParseError("{a b}") == "bad variable name 'a b' in the expression at offset 0");
  CHECK(ParseError("{x,}") == "bad variable name '' in the expression at offset 0");
  CHECK(ParseError("{.a..b}").find("bad variable name 'a..b'") == 0);
  CHECK(ParseError("{a-b}").find("bad variable name") == 0);
  CHECK(ParseError("{%zz}").find("bad variable name") == 0);
  CHECK(ParseError("{list*}").find("explode modifier") == 0);
  CHECK(ParseError("{var:3}").find("prefix modifier") == 0);
}

TEST_CASE("variable names are listed in order of first appearance, each once", "[uri_template]") {
  const UriTemplate t = Parsed("x://{a}/{+b}{?c,a}{#d}{x.y}{%41}");
  CHECK(t.VariableNames() == std::vector<std::string>{"a", "b", "c", "d", "x.y", "%41"});
  CHECK(Parsed("plain://no/vars").VariableNames().empty());
  CHECK(Parsed("x://{a}").text() == "x://{a}");
}

TEST_CASE("expansion follows the RFC 6570 examples of levels 1 to 3", "[uri_template]") {
  const std::vector<std::pair<std::string, std::string>> table = {
      {"{var}", "value"},
      {"{hello}", "Hello%20World%21"},
      {"{+var}", "value"},
      {"{+hello}", "Hello%20World!"},
      {"{+path}/here", "/foo/bar/here"},
      {"here?ref={+path}", "here?ref=/foo/bar"},
      {"X{#var}", "X#value"},
      {"X{#hello}", "X#Hello%20World!"},
      {"map?{x,y}", "map?1024,768"},
      {"{x,hello,y}", "1024,Hello%20World%21,768"},
      {"{+x,hello,y}", "1024,Hello%20World!,768"},
      {"{+path,x}/here", "/foo/bar,1024/here"},
      {"{#x,hello,y}", "#1024,Hello%20World!,768"},
      {"{#path,x}/here", "#/foo/bar,1024/here"},
      {"X{.var}", "X.value"},
      {"X{.x,y}", "X.1024.768"},
      {"{/var}", "/value"},
      {"{/var,x}/here", "/value/1024/here"},
      {"{;x,y}", ";x=1024;y=768"},
      {"{;x,y,empty}", ";x=1024;y=768;empty"},
      {"{?x,y}", "?x=1024&y=768"},
      {"{?x,y,empty}", "?x=1024&y=768&empty="},
      {"?fixed=yes{&x}", "?fixed=yes&x=1024"},
      {"{&x,y,empty}", "&x=1024&y=768&empty="},
      {"{half}", "50%25"},
      {"{+half}", "50%25"},
      {"{base}index", "http%3A%2F%2Fexample.com%2Fhome%2Findex"},
      {"{+base}index", "http://example.com/home/index"},
      {"{empty}", ""},
      {"O{empty}X", "OX"},
      {"{undef}", ""},
      {"{?undef}", ""},
      {"{?x,undef,y}", "?x=1024&y=768"},
      {"{/undef,who}", "/fred"},
      {"{who,who}", "fred,fred"},
      {"{+pct}", "a%2Fb"},
  };
  UriTemplate::Values values = kRfcValues;
  values["pct"] = "a%2Fb";  // an existing triplet survives {+var}
  for (const auto& [text, expected] : table) {
    INFO(text);
    CHECK(Parsed(text).Expand(values) == expected);
  }
  CHECK(Parsed("{var}").Expand({{"var", "caf\xC3\xA9"}}) == "caf%C3%A9");
}

TEST_CASE("a simple variable matches one path segment and the next literal ends it",
          "[uri_template]") {
  const UriTemplate t = Parsed("test://template/{id}/data");
  CHECK(t.Match("test://template/123/data") == UriTemplate::Values{{"id", "123"}});
  CHECK_FALSE(t.Match("test://template/1/2/data"));
  CHECK_FALSE(t.Match("test://template//data"));
  CHECK_FALSE(t.Match("test://template/123/data/"));
  CHECK_FALSE(t.Match("test://template/123?x/data"));
  CHECK_FALSE(t.Match("other://template/123/data"));
  CHECK(Parsed("x://{id}").Match("x://a,b") == UriTemplate::Values{{"id", "a,b"}});
  CHECK(Parsed("x://{name}.json").Match("x://a.b.json") == UriTemplate::Values{{"name", "a.b"}});
  // Greedy: the first expression takes the longest run that lets the rest match.
  CHECK(Parsed("x://{a}-{b}").Match("x://p-q-r") == UriTemplate::Values{{"a", "p-q"}, {"b", "r"}});
}

TEST_CASE("matched values are percent-decoded and invalid encodings do not match",
          "[uri_template]") {
  const UriTemplate t = Parsed("x://{id}");
  CHECK(t.Match("x://Hello%20World%21") == UriTemplate::Values{{"id", "Hello World!"}});
  CHECK(t.Match("x://caf%C3%A9") == UriTemplate::Values{{"id", "caf\xC3\xA9"}});
  CHECK_FALSE(t.Match("x://%C3"));     // a truncated UTF-8 sequence
  CHECK_FALSE(t.Match("x://%FF%FE"));  // never UTF-8
  CHECK_FALSE(t.Match("x://50%"));     // a lone %
  CHECK_FALSE(t.Match("x://%zz"));
  CHECK_FALSE(t.Match("x://a%2Fb"));  // a decoded "/" in one segment
  CHECK(Parsed("x://{+p}").Match("x://a%2Fb") == UriTemplate::Values{{"p", "a/b"}});
}

TEST_CASE("a reserved variable matches any characters including slashes", "[uri_template]") {
  const UriTemplate t = Parsed("file:///{+path}");
  CHECK(t.Match("file:///docs/a/b.md") == UriTemplate::Values{{"path", "docs/a/b.md"}});
  CHECK(t.Match("file:///a?b#c") == UriTemplate::Values{{"path", "a?b#c"}});
  CHECK_FALSE(t.Match("file:///"));
  CHECK(Parsed("x://{+a}/{b}").Match("x://1/2/3") == UriTemplate::Values{{"a", "1/2"}, {"b", "3"}});
  CHECK(Parsed("x://{+a,b}").Match("x://1/2,3") == UriTemplate::Values{{"a", "1/2"}, {"b", "3"}});
  CHECK_FALSE(Parsed("x://{+a,b}").Match("x://1,2,3"));
}

TEST_CASE("prefixed operators match their prefix and may match nothing", "[uri_template]") {
  CHECK(Parsed("x://p{#f}").Match("x://p#sec/1") == UriTemplate::Values{{"f", "sec/1"}});
  CHECK(Parsed("x://p{#f}").Match("x://p") == UriTemplate::Values{});
  CHECK(Parsed("x://file{.ext}").Match("x://file.json") == UriTemplate::Values{{"ext", "json"}});
  CHECK_FALSE(Parsed("x://file{.ext}").Match("x://file.tar.gz"));
  CHECK(Parsed("x://f{.a,b}").Match("x://f.tar.gz") ==
        UriTemplate::Values{{"a", "tar"}, {"b", "gz"}});
  CHECK(Parsed("x://r{/a,b}").Match("x://r/1/2") == UriTemplate::Values{{"a", "1"}, {"b", "2"}});
  CHECK(Parsed("x://r{/a,b}").Match("x://r/1") == UriTemplate::Values{{"a", "1"}});
  CHECK(Parsed("x://r{/a}").Match("x://r/") == UriTemplate::Values{{"a", ""}});
  CHECK_FALSE(Parsed("x://r{/a,b}").Match("x://r/1/2/3"));
  CHECK(Parsed("x://m{;x,y}").Match("x://m;y=2;x") == UriTemplate::Values{{"x", ""}, {"y", "2"}});
}

TEST_CASE("query expressions accept their parameters in any order and no others",
          "[uri_template]") {
  const UriTemplate t = Parsed("search://{kind}{?q,lang}");
  CHECK(t.Match("search://docs?q=hello%20world&lang=en") ==
        UriTemplate::Values{{"kind", "docs"}, {"q", "hello world"}, {"lang", "en"}});
  CHECK(t.Match("search://docs?lang=en&q=x") ==
        UriTemplate::Values{{"kind", "docs"}, {"q", "x"}, {"lang", "en"}});
  CHECK(t.Match("search://docs?q=") == UriTemplate::Values{{"kind", "docs"}, {"q", ""}});
  CHECK(t.Match("search://docs") == UriTemplate::Values{{"kind", "docs"}});
  CHECK_FALSE(t.Match("search://docs?page=2"));
  CHECK_FALSE(t.Match("search://docs?q=a&q=b"));
  CHECK_FALSE(t.Match("search://docs?q"));
  CHECK(Parsed("x://s{?q}{&page}").Match("x://s?q=a&page=2") ==
        UriTemplate::Values{{"q", "a"}, {"page", "2"}});
  CHECK(Parsed("x://s?fixed=1{&q}").Match("x://s?fixed=1&q=%2F") ==
        UriTemplate::Values{{"q", "/"}});
}

TEST_CASE("a variable named twice must match the same value both times", "[uri_template]") {
  const UriTemplate t = Parsed("x://{a}/{a}");
  CHECK(t.Match("x://k/k") == UriTemplate::Values{{"a", "k"}});
  CHECK_FALSE(t.Match("x://k/j"));
}

TEST_CASE("expanding a match gives back the URI for canonically encoded URIs", "[uri_template]") {
  const std::vector<std::pair<std::string, std::string>> table = {
      {"test://template/{id}/data", "test://template/a%20b/data"},
      {"file:///{+path}", "file:///docs/read%20me.md"},
      {"x://{a}{/b,c}{?q,lang}{#f}", "x://1/2/3?q=z&lang=en#top"},
      {"x://{a}{.ext}", "x://name.txt"},
  };
  for (const auto& [text, uri] : table) {
    INFO(text << " " << uri);
    const UriTemplate t = Parsed(text);
    const auto values = t.Match(uri);
    REQUIRE(values);
    CHECK(t.Expand(*values) == uri);
  }
}

TEST_CASE("a URI longer than the match bound never matches and adversarial templates stay fast",
          "[uri_template]") {
  const UriTemplate t = Parsed("x://{+a}");
  CHECK_FALSE(t.Match("x://" + std::string(UriTemplate::kMaxMatchBytes, 'a')));
  CHECK(t.Match("x://" + std::string(UriTemplate::kMaxMatchBytes - 4, 'a')));
  // Adjacent expressions with no literal between them and a tail that never matches:
  // memoised backtracking answers in quadratic, not exponential, time.
  const UriTemplate slow = Parsed("x://{a}{b}{c}{d}{e}!");
  CHECK_FALSE(slow.Match("x://" + std::string(2000, 'a') + "?"));
}

TEST_CASE("a template without variables matches only itself", "[uri_template]") {
  const UriTemplate t = Parsed("config://app");
  CHECK(t.Match("config://app") == UriTemplate::Values{});
  CHECK_FALSE(t.Match("config://ap"));
  CHECK_FALSE(t.Match("config://app2"));
  CHECK(t.Expand({}) == "config://app");
}

}  // namespace uri_template_test
