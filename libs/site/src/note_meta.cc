#include "folio/site/note_meta.h"

namespace folio::site {

int64_t UpdatedMs(const NoteMeta& n) { return n.modified_ms ? n.modified_ms : n.updated_ms; }

int64_t PublishedMs(const NoteMeta& n) {
  if (n.date_ms) return n.date_ms;
  return n.created_ms ? n.created_ms : n.updated_ms;
}

}  // namespace folio::site
