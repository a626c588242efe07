// The benchmark drivers' note shape (push-bench, watch-bench,
// propagation-bench): notes `bench/note_{i}.md` of ~400 bytes, each linking
// the hub `bench/note_0`, with a revision line so that every push changes
// the note. Header-only; benchmark code, any thread.
#pragma once

#include <string>
#include <vector>

#include "folio/core/json.h"

namespace folio::bench {

// Note i at revision rev: frontmatter title, H1, "Revision R.", a paragraph
// linking [[bench/note_0]], a three-item list, a js fence, a closing line.
inline std::string Note(int i, int rev) {
  return "---\ntitle: Bench note " + std::to_string(i) + "\n---\n# Bench note " + std::to_string(i) +
         "\n\nRevision " + std::to_string(rev) +
         ".\n\nThis note links to [[bench/note_0]] and carries a little text so that it looks "
         "like a real note.\n\n- first item\n- second item\n- third item\n\n```js\nconst x = " +
         std::to_string(i) + ";\nconsole.log(x * 2);\n```\n\nA closing paragraph with a few more words.\n";
}

// A push body ({"notes":[...]}) with notes `ids` at revision rev.
inline std::string Body(const std::vector<int>& ids, int rev) {
  JsonWriter w;
  w.BeginObject().Key("notes").BeginArray();
  for (int i : ids) {
    w.BeginObject().Key("path").String("bench/note_" + std::to_string(i) + ".md").Key("content").String(Note(i, rev)).EndObject();
  }
  w.EndArray().EndObject();
  return w.Take();
}

// Note i's URL ("_" becomes "-": bench/note_7.md -> /bench/note-7).
inline std::string Url(int i) { return "/bench/note-" + std::to_string(i); }

}  // namespace folio::bench
