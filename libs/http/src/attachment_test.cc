// The attachment policy (attachment.h): which files display inline, which are
// downloads, and how the file name goes into Content-Disposition.
#include "folio/http/attachment.h"

#include <doctest/doctest.h>

using namespace folio::http;

TEST_CASE("attachments: types by name, inline only when harmless") {
  CHECK(ContentTypeForName("media/Photo.PNG") == "image/png");
  CHECK(ContentTypeForName("a.b/c") == "");
  CHECK(ContentTypeForName("fonts/Inter.woff2") == "font/woff2");  // @font-face in publish.css
  CHECK(ContentTypeForName("Inter.otf") == "font/otf");
  CHECK(ContentTypeForName("x.html") == "");  // unknown: never given an active type by name
  CHECK(ContentTypeForName("noext") == "");

  for (const char* safe : {"image/png", "image/jpeg", "image/gif", "image/webp", "image/avif", "image/bmp",
                           "image/x-icon", "audio/mpeg", "video/mp4", "application/pdf",
                           "text/plain; charset=utf-8", "IMAGE/PNG"}) {
    CHECK_MESSAGE(IsInlineSafeType(safe), safe);
  }
  for (const char* active : {"image/svg+xml", "text/html", "application/xhtml+xml", "application/xml", "text/xml",
                             "text/javascript", "application/octet-stream", "text/css", "application/json", ""}) {
    CHECK_MESSAGE(!IsInlineSafeType(active), active);
  }

  auto png = AttachmentHeadersFor("img.png", "image/png");
  CHECK(png.content_type == "image/png");
  CHECK(png.disposition.empty());
  auto pdf = AttachmentHeadersFor("paper.pdf", "application/pdf");
  CHECK(pdf.content_type == "application/pdf");
  CHECK(pdf.disposition.empty());
  auto txt = AttachmentHeadersFor("notes.txt", "text/plain; charset=utf-8");
  CHECK(txt.content_type == "text/plain; charset=utf-8");
  CHECK(txt.disposition.empty());

  auto svg = AttachmentHeadersFor("evil.svg", "image/svg+xml");
  CHECK(svg.content_type == "image/svg+xml");  // so that <img> still renders it
  CHECK(svg.disposition == "attachment; filename=\"evil.svg\"");
  auto html = AttachmentHeadersFor("page.html", "text/html");
  CHECK(html.content_type == "text/html");
  CHECK(html.disposition == "attachment; filename=\"page.html\"");
  auto unknown = AttachmentHeadersFor("data.bin", "");
  CHECK(unknown.content_type == "application/octet-stream");
  CHECK(unknown.disposition == "attachment; filename=\"data.bin\"");

  // HTML bytes stored under a .png name: served as the name says, and, since
  // the stored type disagrees, as a download.
  auto lying = AttachmentHeadersFor("cat.png", "text/html; charset=utf-8");
  CHECK(lying.content_type == "image/png");
  CHECK(lying.disposition == "attachment; filename=\"cat.png\"");
  // The name cannot make an active stored type inline, nor the stored type
  // make an active name inline.
  CHECK(!AttachmentHeadersFor("x.svg", "image/png").disposition.empty());
  CHECK(AttachmentHeadersFor("x.svg", "image/png").content_type == "image/svg+xml");
  // An octet-stream (or missing) stored type defers to the name.
  CHECK(AttachmentHeadersFor("x.jpg", "application/octet-stream").disposition.empty());
  CHECK(AttachmentHeadersFor("x.jpg", "").content_type == "image/jpeg");
  // Unknown name: the stored type, if it is a well-formed media type.
  CHECK(AttachmentHeadersFor("blob", "image/webp").content_type == "image/webp");
  CHECK(AttachmentHeadersFor("blob", "image/webp").disposition.empty());
  auto injected = AttachmentHeadersFor("blob", "text/plain\r\nSet-Cookie: a=b");
  CHECK(injected.content_type == "application/octet-stream");
  CHECK(!injected.disposition.empty());
}

TEST_CASE("attachments: JavaScript is never served as script, whatever the name") {
  // An uploaded .js, or a blob stored as JavaScript under a name without an
  // extension: bytes for download, which a <script src> on the site refuses.
  for (const char* js : {"text/javascript", "application/javascript", "application/x-javascript", "text/ecmascript",
                         "application/ecmascript", "application/x-ecmascript", "text/x-javascript", "text/jscript",
                         "text/livescript", "text/javascript1.5", "text/javascript; charset=utf-8",
                         "text/javascript;goal=module", " Application/JavaScript ; charset=utf-8"}) {
    for (const char* name : {"app.js", "module.mjs", "blob", "x.unknown"}) {
      CAPTURE(js);
      CAPTURE(name);
      auto h = AttachmentHeadersFor(name, js);
      CHECK(h.content_type == "application/octet-stream");
      CHECK(h.disposition.rfind("attachment; filename=\"", 0) == 0);
    }
  }
  CHECK(AttachmentHeadersFor("app.js", "").content_type == "application/octet-stream");
  // Names that say otherwise decide the type, as a download (the stored type disagrees).
  auto png = AttachmentHeadersFor("x.png", "text/javascript");
  CHECK(png.content_type == "image/png");
  CHECK(png.disposition == "attachment; filename=\"x.png\"");
  // Not JavaScript: kept.
  CHECK(AttachmentHeadersFor("data", "application/json").content_type == "application/json");
  CHECK(AttachmentHeadersFor("data", "text/javascriptx").content_type == "text/javascriptx");
}

TEST_CASE("attachments: Content-Disposition quotes and encodes the file name") {
  CHECK(ContentDispositionAttachment("") == "attachment; filename=\"download\"");
  CHECK(ContentDispositionAttachment("a \"b\"\\c.svg") == "attachment; filename=\"a _b__c.svg\"");
  CHECK(ContentDispositionAttachment("x\r\nSet-Cookie: y.html") == "attachment; filename=\"x__Set-Cookie: y.html\"");
  CHECK(ContentDispositionAttachment("Über café.svg") ==
        "attachment; filename=\"__ber caf__.svg\"; filename*=UTF-8''%C3%9Cber%20caf%C3%A9.svg");
  // Not UTF-8: only the fallback.
  CHECK(ContentDispositionAttachment("\xff.html") == "attachment; filename=\"_.html\"");
}
