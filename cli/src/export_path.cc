#include "export_path.h"

namespace folio::cli {

Result<std::string> ExportPath(std::string_view url, std::string_view content_type) {
  const bool html = content_type.starts_with("text/html");
  const bool json = content_type.starts_with("application/json");
  auto bad = [&](const char* why) {
    return Status::Invalid("the server listed the URL '" + std::string(url.substr(0, 200)) + "', " + why);
  };
  if (!url.starts_with('/')) return bad("which does not start with '/'");
  if (url == "/") {
    if (!html) return bad("which is not an HTML page");
    return std::string("index.html");
  }
  std::string_view rest = url.substr(1);
  // A trailing slash ("/folder/"): the folder's index.
  bool folder = rest.ends_with('/');
  if (folder) rest.remove_suffix(1);
  for (std::string_view r = rest; ;) {
    std::string_view seg = r.substr(0, r.find('/'));
    if (seg.empty() || seg == "." || seg == "..") return bad("which has an empty, '.' or '..' segment");
    if (seg.size() > 240) return bad("which has a segment longer than 240 bytes");
    for (char c : seg) {
      if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return bad("which holds a control character");
    }
    if (seg.size() == r.size()) break;
    r.remove_prefix(seg.size() + 1);
  }
  if (folder) {
    if (!html && !json) return bad("which ends in '/' but is neither HTML nor JSON");
    return std::string(rest) + (html ? "/index.html" : "/index.json");
  }
  return html ? std::string(rest) + ".html" : std::string(rest);
}

}  // namespace folio::cli
