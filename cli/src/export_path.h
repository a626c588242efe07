// Where `folio export` writes a URL's bytes inside the export folder, so
// that nginx's `try_files $uri $uri.html $uri/index.html $uri/index.json
// =404` finds them: an HTML page at <url>.html ("/" at index.html, "/a/" at
// a/index.html), a JSON folder URL ("/_/tree/a/", the explorer's) at
// a/index.json, anything else (the stylesheet, feeds, the sitemap,
// attachments) at <url> itself. Pure; any thread.
#pragma once

#include <string>
#include <string_view>

#include "folio/core/status.h"

namespace folio::cli {

// The relative file path for `url` (a decoded URL path as the server lists
// it), served with `content_type`. Fails with kInvalidArgument (naming the URL) if it does not start
// with '/', holds an empty, "." or ".." segment, a NUL or a control
// character, or a segment longer than 240 bytes: a file name no server of
// ours makes, and one that could escape the folder.
Result<std::string> ExportPath(std::string_view url, std::string_view content_type);

}  // namespace folio::cli
