// folio's site script: enhancements on top of complete server-rendered pages
// (theme toggle, explorer, link previews, graph). Every page works without it.
"use strict";
