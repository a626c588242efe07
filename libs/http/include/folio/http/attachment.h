// How folio serves files authors upload (attachments), so that none of them
// can run script on the site's origin (issue 9, item 2):
//
//  - every response carries kUntrustedCsp (a sandboxed document that may load
//    nothing and run no script; inline style only, as GitHub serves raw
//    files) and X-Content-Type-Options: nosniff;
//  - a type a browser would render as an active document (HTML, XHTML, XML,
//    SVG, JavaScript, anything unknown) is sent as a download
//    (Content-Disposition: attachment); raster images, audio, video, PDF and
//    plain text stay inline;
//  - a JavaScript type (text/javascript and its aliases, with any
//    parameters) is sent as application/octet-stream, whatever the name:
//    a <script src> ignores Content-Disposition, and a note page with a
//    self-hosted mermaid allows script-src 'self'; with nosniff, bytes of
//    another type never run as script.
//
// SVG is a download too: opened directly it could otherwise run its script
// (the sandbox stops that as well). Pages still show SVGs, because they
// embed them with <img>, which ignores Content-Disposition and never runs an
// image's script. The Content-Type is decided from the file name and the
// type stored with the bytes together (AttachmentHeadersFor), so bytes
// stored as text/html under a ".png" name are served as image/png and,
// since the two disagree, as a download.
//
// Pure functions; thread-safe.
#pragma once

#include <string>
#include <string_view>

namespace folio::http {

inline constexpr std::string_view kUntrustedCsp = "default-src 'none'; style-src 'unsafe-inline'; sandbox";
inline constexpr std::string_view kNoSniff = "nosniff";

// The Content-Type folio gives a file by its extension (case-insensitive),
// e.g. "image/png" for "a/b.PNG"; "" if the extension is not one it knows.
std::string_view ContentTypeForName(std::string_view name);

// True for types a browser displays without running anything on the
// page's origin: raster images (png, jpeg, gif, webp, avif, bmp, ico),
// audio/*, video/*, application/pdf, text/plain. Parameters are ignored.
bool IsInlineSafeType(std::string_view content_type);

struct AttachmentHeaders {
  std::string content_type;  // the Content-Type to send
  std::string disposition;   // the Content-Disposition to send; "" = inline (send none)
};

// For a file served under the name `name` (a URL's last segment, decoded)
// whose bytes were stored with `stored_type` ("" if none):
//  - Content-Type: the name's type if the name has a known extension (the
//    stored one if it has the same essence and carries parameters), else
//    the stored type if it is a plain token/token value, else
//    application/octet-stream; application/octet-stream too in place of a
//    JavaScript type;
//  - inline only if that type is inline-safe and the stored type does not
//    claim something else that is not (an HTML body named ".png" is a
//    download); otherwise ContentDispositionAttachment(name).
AttachmentHeaders AttachmentHeadersFor(std::string_view name, std::string_view stored_type);

// `attachment; filename="<ASCII fallback>"` plus, when the name is not
// plain ASCII and is valid UTF-8, `; filename*=UTF-8''<percent-encoded>`
// (RFC 6266, RFC 8187). The fallback replaces quotes, backslashes, control
// and non-ASCII bytes with '_'; an empty name becomes "download".
std::string ContentDispositionAttachment(std::string_view name);

}  // namespace folio::http
