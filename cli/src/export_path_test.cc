#include "export_path.h"

#include <doctest/doctest.h>

namespace folio::cli {

constexpr std::string_view kHtml = "text/html; charset=utf-8";

TEST_CASE("export path: pages get .html, other files keep their URL") {
  CHECK(*ExportPath("/", kHtml) == "index.html");
  CHECK(*ExportPath("/notes/hello", kHtml) == "notes/hello.html");
  CHECK(*ExportPath("/notes/v1.2", kHtml) == "notes/v1.2.html");
  CHECK(*ExportPath("/tags/", kHtml) == "tags/index.html");
  CHECK(*ExportPath("/_/tree/a/", "application/json") == "_/tree/a/index.json");
  CHECK(*ExportPath("/_/style.css", "text/css") == "_/style.css");
  CHECK(*ExportPath("/Über uns/a b.png", "text/css") == "Über uns/a b.png");
}

TEST_CASE("export path: URLs that could leave the folder are refused") {
  for (const char* url : {"", "notes", "//x", "/a//b", "/..", "/a/../b", "/./a", "/a/.", "/a\nb"}) {
    Result<std::string> p = ExportPath(url, kHtml);
    CHECK_MESSAGE(!p.ok(), url);
    if (!p.ok()) CHECK(p.status().code() == Code::kInvalidArgument);
  }
  CHECK(!ExportPath(std::string("/a\0b", 4), "text/css").ok());
  CHECK(!ExportPath("/" + std::string(241, 'x'), kHtml).ok());
  CHECK(!ExportPath("/", "text/css").ok());
  CHECK(!ExportPath("/a/", "image/png").ok());
}

}  // namespace folio::cli
