// libFuzzer target: bytes -> ParseFrontmatter (the YAML block at the top of
// a note, parsed by yaml-cpp). Checks what frontmatter.h promises whatever
// the input: no exception escapes; body_offset lies inside the document, at
// a line start after a closed block and 0 otherwise; lists hold no empty or
// duplicate entries and tags carry no '#', commas or spaces; every field is
// valid UTF-8 when the input is. (Not `error`: yaml-cpp quotes single bytes
// of the input in its messages; those reach only warnings, which the JSON
// writer makes valid.)
// If the first byte is odd the rest is wrapped in "---\n" ... "\n---\n", so
// the fuzzer spends its time inside YAML; else the rest is the note as is.
// The plain-lines reader must give what yaml-cpp gives (ParseFrontmatterWith).
// Seeds: tests/fuzz/corpus/markdown_frontmatter_fuzz; build and run: tests/fuzz/README.md.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "folio/core/text.h"
#include "folio/markdown/frontmatter.h"
#include "folio/testing/small_stack.h"

namespace {

void Require(bool ok, const char* what, std::string_view detail = "") {
  if (ok) return;
  std::fprintf(stderr, "frontmatter_fuzz: %s: %.*s\n", what, static_cast<int>(std::min<size_t>(detail.size(), 400)),
               detail.data());
  std::abort();
}

void CheckList(const std::vector<std::string>& list, bool utf8, const char* what) {
  for (size_t i = 0; i < list.size(); ++i) {
    Require(!list[i].empty(), what, "empty entry");
    Require(!utf8 || folio::IsValidUtf8(list[i]), what, list[i]);
    for (size_t j = 0; j < i; ++j) Require(list[i] != list[j], what, list[i]);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 1) return 0;
  std::string doc(reinterpret_cast<const char*>(data) + 1, size - 1);
  if (data[0] & 1) doc = "---\n" + doc + "\n---\n";
  folio::markdown::Frontmatter fm, ref;
  // yaml-cpp recurses per nesting level: on a small stack, so a bound that
  // does not hold shows up at once (issue 22).
  folio::testing::RunOnSmallStack([&] {
    fm = folio::markdown::ParseFrontmatter(doc);
    ref = folio::markdown::ParseFrontmatterWith(doc, /*simple_lines=*/false);
  });
  Require(fm.title == ref.title && fm.aliases == ref.aliases && fm.tags == ref.tags && fm.permalink == ref.permalink &&
              fm.description == ref.description && fm.publish == ref.publish && fm.private_note == ref.private_note && fm.cssclasses == ref.cssclasses &&
              fm.date == ref.date && fm.updated == ref.updated && fm.image == ref.image && fm.lang == ref.lang &&
              fm.body_offset == ref.body_offset && fm.error.empty() == ref.error.empty(),
          "plain-lines reader and yaml-cpp disagree", doc);

  Require(fm.body_offset <= doc.size(), "body_offset past the end");
  if (!fm.present) Require(fm.body_offset == 0, "body_offset without a block");
  if (fm.body_offset > 0) {
    Require(fm.present, "body_offset but no block");
    Require(fm.body_offset >= 7, "body_offset inside the opening line");  // "---\n---"
    Require(fm.body_offset == doc.size() || doc[fm.body_offset - 1] == '\n', "body_offset not at a line start");
  }
  bool utf8 = folio::IsValidUtf8(doc);
  CheckList(fm.aliases, utf8, "aliases");
  CheckList(fm.tags, utf8, "tags");
  CheckList(fm.cssclasses, utf8, "cssclasses");
  for (const auto& t : fm.tags) {
    Require(t.front() != '#', "tag starts with '#'", t);
    Require(t.find_first_of(", \t\r\n") == std::string::npos, "tag holds a separator", t);
  }
  if (utf8) {
    for (const std::string* s : {&fm.title, &fm.permalink, &fm.description, &fm.date, &fm.updated, &fm.image,
                                 &fm.lang}) {
      Require(folio::IsValidUtf8(*s), "field is not valid UTF-8", *s);
    }
  }
  return 0;
}
