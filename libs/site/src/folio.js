// folio's one site script: theme toggle, the header's search box, explorer
// tree, link previews, local and global graph, mermaid diagrams in the
// reader's theme, navigation without reloads. The server-rendered page is complete without it; every
// part here only enhances markup that is already there and gives up quietly
// (console.warn, page unchanged) when a resource is missing or malformed.
// Same-origin only; no eval, no inline style attributes (the page's CSP has
// style-src 'self'): positions are written through the CSSOM.
(function () {
  "use strict";

  var doc = document;
  var root = doc.documentElement;
  var kThemeKey = "folio-theme";
  var kOpenKey = "folio-tree-open";
  var kMaxJsonBytes = 8 << 20;
  var kMaxPageBytes = 2 << 20;

  // The words this script writes, per language (issue 29): the table of
  // <html lang>'s primary subtag, English for others; libs/site/src/i18n/
  // holds the pages' own. A plural string holds its forms split by "|",
  // chosen as i18n.cc's PluralIndex does. i18n_test.cc checks that every
  // language has every key: keep one "key: \"value\"," per line.
  // i18n:begin
  var kStrings = {
    en: {
      theme_label: "Dark theme",
      theme_to_light: "Switch to the light theme",
      theme_to_dark: "Switch to the dark theme",
      graph_label: "Graph: {notes}, {links}",
      notes: "{n} note|{n} notes",
      links: "{n} link|{n} links",
      highlight: "Highlight notes…",
      highlight_label: "Highlight notes whose title contains",
      results_label: "Search results",
      no_results: "No results",
      all_results: "All results for “{q}”",
      search_shortcut: "Search notes ({k} K)",
      more: "{n} more…|{n} more…",
    },
    de: {
      theme_label: "Dunkles Design",
      theme_to_light: "Zum hellen Design wechseln",
      theme_to_dark: "Zum dunklen Design wechseln",
      graph_label: "Graph: {notes}, {links}",
      notes: "{n} Notiz|{n} Notizen",
      links: "{n} Link|{n} Links",
      highlight: "Notizen hervorheben…",
      highlight_label: "Notizen hervorheben, deren Titel dies enthält",
      results_label: "Suchergebnisse",
      no_results: "Keine Ergebnisse",
      all_results: "Alle Ergebnisse für „{q}“",
      search_shortcut: "Notizen durchsuchen ({k} K)",
      more: "{n} weitere…|{n} weitere…",
    },
    fr: {
      theme_label: "Thème sombre",
      theme_to_light: "Passer au thème clair",
      theme_to_dark: "Passer au thème sombre",
      graph_label: "Graphe : {notes}, {links}",
      notes: "{n} note|{n} notes",
      links: "{n} lien|{n} liens",
      highlight: "Surligner des notes…",
      highlight_label: "Surligner les notes dont le titre contient",
      results_label: "Résultats de recherche",
      no_results: "Aucun résultat",
      all_results: "Tous les résultats pour « {q} »",
      search_shortcut: "Rechercher dans les notes ({k} K)",
      more: "{n} autre…|{n} autres…",
    },
    es: {
      theme_label: "Tema oscuro",
      theme_to_light: "Cambiar al tema claro",
      theme_to_dark: "Cambiar al tema oscuro",
      graph_label: "Grafo: {notes}, {links}",
      notes: "{n} nota|{n} notas",
      links: "{n} enlace|{n} enlaces",
      highlight: "Resaltar notas…",
      highlight_label: "Resaltar las notas cuyo título contiene",
      results_label: "Resultados de búsqueda",
      no_results: "Sin resultados",
      all_results: "Todos los resultados para «{q}»",
      search_shortcut: "Buscar notas ({k} K)",
      more: "{n} más…|{n} más…",
    },
    ru: {
      theme_label: "Тёмная тема",
      theme_to_light: "Включить светлую тему",
      theme_to_dark: "Включить тёмную тему",
      graph_label: "Граф: {notes}, {links}",
      notes: "{n} заметка|{n} заметки|{n} заметок",
      links: "{n} связь|{n} связи|{n} связей",
      highlight: "Выделить заметки…",
      highlight_label: "Выделить заметки, в названии которых есть",
      results_label: "Результаты поиска",
      no_results: "Ничего не найдено",
      all_results: "Все результаты по запросу «{q}»",
      search_shortcut: "Поиск по заметкам ({k} K)",
      more: "ещё {n}…|ещё {n}…|ещё {n}…",
    },
    ja: {
      theme_label: "ダークテーマ",
      theme_to_light: "ライトテーマに切り替える",
      theme_to_dark: "ダークテーマに切り替える",
      graph_label: "グラフ: {notes}、{links}",
      notes: "{n} 件のノート",
      links: "{n} 本のリンク",
      highlight: "ノートをハイライト…",
      highlight_label: "タイトルに次を含むノートをハイライト",
      results_label: "検索結果",
      no_results: "結果なし",
      all_results: "「{q}」のすべての結果",
      search_shortcut: "ノートを検索 ({k} K)",
      more: "ほか {n} 件…",
    },
    zh: {
      theme_label: "深色主题",
      theme_to_light: "切换到浅色主题",
      theme_to_dark: "切换到深色主题",
      graph_label: "关系图：{notes}，{links}",
      notes: "{n} 篇笔记",
      links: "{n} 条链接",
      highlight: "高亮笔记…",
      highlight_label: "高亮标题包含以下内容的笔记",
      results_label: "搜索结果",
      no_results: "没有结果",
      all_results: "“{q}”的全部结果",
      search_shortcut: "搜索笔记 ({k} K)",
      more: "还有 {n} 篇…",
    },
    pt: {
      theme_label: "Tema escuro",
      theme_to_light: "Mudar para o tema claro",
      theme_to_dark: "Mudar para o tema escuro",
      graph_label: "Grafo: {notes}, {links}",
      notes: "{n} nota|{n} notas",
      links: "{n} link|{n} links",
      highlight: "Destacar notas…",
      highlight_label: "Destacar as notas cujo título contém",
      results_label: "Resultados da pesquisa",
      no_results: "Nenhum resultado",
      all_results: "Todos os resultados para “{q}”",
      search_shortcut: "Pesquisar notas ({k} K)",
      more: "mais {n}…|mais {n}…",
    },
  };
  // i18n:end

  function lang() { return (root.lang || "en").toLowerCase().split("-")[0]; }
  function words() { return kStrings[lang()] || kStrings.en; }
  // A string of the page's language with each {name} of vars filled in.
  function tr(key, vars) {
    return (words()[key] || kStrings.en[key]).replace(/\{(\w+)\}/g, function (m, k) {
      return vars && k in vars ? String(vars[k]) : m;
    });
  }
  // The plural form for n (CLDR, integers), {n} filled in.
  function trn(key, n) {
    var forms = (words()[key] || kStrings.en[key]).split("|"), l = lang(), i;
    if (l === "ru") i = n % 10 === 1 && n % 100 !== 11 ? 0 : n % 10 >= 2 && n % 10 <= 4 && (n % 100 < 12 || n % 100 > 14) ? 1 : 2;
    else if (l === "fr" || l === "pt") i = n <= 1 ? 0 : 1;
    else i = n === 1 ? 0 : 1;
    return forms[Math.min(i, forms.length - 1)].replace("{n}", String(n));
  }

  function make(tag, cls, text) {
    var e = doc.createElement(tag);
    if (cls) e.className = cls;
    if (text != null) e.textContent = text;
    return e;
  }

  function warn(what, err) {
    if (window.console) console.warn("folio: " + what + ": " + (err && err.message ? err.message : err));
  }

  // GET same-origin JSON; rejects on a non-200, a non-JSON type or a body
  // past kMaxJsonBytes.
  function getJson(url) {
    return fetch(url, { credentials: "same-origin", headers: { Accept: "application/json" } }).then(function (r) {
      if (r.status !== 200) throw new Error(url + " answered HTTP " + r.status);
      if (!/json/.test(r.headers.get("content-type") || "")) throw new Error(url + " is not JSON");
      return r.text();
    }).then(function (t) {
      if (t.length > kMaxJsonBytes) throw new Error(url + " is larger than " + kMaxJsonBytes + " bytes");
      return JSON.parse(t);
    });
  }

  function media(q) { return window.matchMedia ? window.matchMedia(q) : { matches: false }; }

  function onMediaChange(mq, fn) {
    if (mq.addEventListener) mq.addEventListener("change", fn);
    else if (mq.addListener) mq.addListener(fn);
  }

  // Per-page initialisers: fn(root) runs once at start with root = document,
  // and again after each client-side navigation with root = the swapped
  // elements' parent (see "navigation" below).
  var pageInits = [];
  function onPage(fn) { pageInits.push(fn); }
  function runPageInits(root) {
    pageInits.forEach(function (fn) {
      try { fn(root); } catch (err) { warn(fn.name || "page init", err); }
    });
  }

  // --- theme -----------------------------------------------------------------

  var darkQuery = media("(prefers-color-scheme: dark)");

  // The reader's saved choice (mirrored on <html data-theme>), else the system's.
  function effectiveTheme() {
    var t = root.dataset.theme;
    if (t === "dark" || t === "light") return t;
    return darkQuery.matches ? "dark" : "light";
  }

  // Obsidian's classes: body.theme-light or body.theme-dark (the inline
  // snippet set one before the first paint; this keeps it in step).
  function applyTheme() {
    var dark = effectiveTheme() === "dark";
    doc.body.classList.toggle("theme-dark", dark);
    doc.body.classList.toggle("theme-light", !dark);
  }

  // A listener with an owner element is dropped once the owner left the
  // page (a graph swapped out by navigation).
  var themeListeners = [];
  function onThemeChange(fn, owner) { themeListeners.push({ fn: fn, owner: owner }); }
  function themeChanged() {
    themeListeners = themeListeners.filter(function (l) { return !l.owner || l.owner.isConnected; });
    themeListeners.forEach(function (l) { l.fn(); });
  }

  function initTheme() {
    var header = doc.querySelector(".site-header");
    applyTheme();
    if (!header) return;
    var button = make("button", "theme-toggle");
    button.type = "button";
    button.appendChild(make("span", "theme-toggle-icon")).setAttribute("aria-hidden", "true");
    function update() {
      applyTheme();
      var dark = effectiveTheme() === "dark";
      button.setAttribute("aria-pressed", dark ? "true" : "false");
      button.setAttribute("aria-label", tr("theme_label"));
      button.title = tr(dark ? "theme_to_light" : "theme_to_dark");
    }
    button.addEventListener("click", function () {
      var next = effectiveTheme() === "dark" ? "light" : "dark";
      root.dataset.theme = next;
      try { localStorage.setItem(kThemeKey, next); } catch (e) { /* private mode: this page only */ }
      update();
      themeChanged();
    });
    onMediaChange(darkQuery, function () { update(); themeChanged(); });
    // Another tab flipped it.
    window.addEventListener("storage", function (e) {
      if (e.key !== kThemeKey) return;
      if (e.newValue === "dark" || e.newValue === "light") root.dataset.theme = e.newValue;
      else delete root.dataset.theme;
      update();
      themeChanged();
    });
    update();
    header.insertBefore(button, header.querySelector(".site-outline-toggle"));
  }

  // --- panels: the explorer and the outline behind the header's buttons -------
  // (phones: the explorer; below 1200 px: the outline). body.is-explorer-open /
  // body.is-outline-open show them (style.css); Escape, the backdrop or a link
  // inside closes them. The open explorer is also Publish's
  // .published-container.is-left-column-open, which Publish themes key on.

  var kPanels = [
    { button: ".site-explorer-toggle", panel: "#explorer", cls: "is-explorer-open", container: "is-left-column-open" },
    { button: ".site-outline-toggle", panel: "#outline", cls: "is-outline-open" }
  ];
  var backdrop = null;

  function containerClass(k, on) {
    var c = k.container && doc.querySelector(".published-container");
    if (c) c.classList.toggle(k.container, on);
  }

  function closePanels() {
    kPanels.forEach(function (k) {
      doc.body.classList.remove(k.cls);
      containerClass(k, false);
      var b = doc.querySelector(k.button);
      if (b) b.setAttribute("aria-expanded", "false");
    });
    if (backdrop) { backdrop.remove(); backdrop = null; }
  }

  function openPanel(k) {
    closePanels();
    doc.body.classList.add(k.cls);
    containerClass(k, true);
    var b = doc.querySelector(k.button);
    if (b) b.setAttribute("aria-expanded", "true");
    backdrop = make("div", "panel-backdrop");
    backdrop.addEventListener("click", closePanels);
    doc.body.appendChild(backdrop);
    var panel = doc.querySelector(k.panel);
    var first = panel && panel.querySelector("a[aria-current], a.is-active, a[href]");
    if (first) first.focus({ preventScroll: true });
  }

  function initPanels() {
    kPanels.forEach(function (k) {
      var b = doc.querySelector(k.button);
      if (!b) return;
      b.addEventListener("click", function () {
        if (doc.body.classList.contains(k.cls)) closePanels(); else openPanel(k);
      });
    });
    doc.addEventListener("keydown", function (e) { if (e.key === "Escape" && backdrop) closePanels(); });
    doc.addEventListener("click", function (e) {
      var a = e.target.closest && e.target.closest("a[href]");
      if (a && backdrop && a.closest("#explorer, #outline")) closePanels();
    });
    onMediaChange(media("(min-width: 1200px)"), closePanels);
  }

  // --- outline: the heading being read is marked (a.is-active) ---------------

  var outlineObserver = null;  // the current page's; a swapped-in page replaces it

  function initOutline() {
    if (outlineObserver) { outlineObserver.disconnect(); outlineObserver = null; }
    var button = doc.querySelector(".site-outline-toggle");
    var nav = doc.getElementById("outline");
    if (button) button.hidden = !nav;
    if (!nav || !window.IntersectionObserver) return;
    var links = Array.prototype.slice.call(nav.querySelectorAll("a[href^='#']"));
    var heads = [];
    links.forEach(function (a) {
      var id = a.getAttribute("href").slice(1);
      try { id = decodeURIComponent(id); } catch (e) { /* keep raw */ }
      var h = doc.getElementById(id);
      if (h) heads.push({ h: h, a: a });
    });
    if (!heads.length) return;
    var active = null;
    function mark() {
      // The last heading above the top third of the window; the first before any.
      var line = window.innerHeight * 0.3, cur = heads[0];
      for (var i = 0; i < heads.length; i++) {
        if (heads[i].h.getBoundingClientRect().top <= line) cur = heads[i]; else break;
      }
      if (cur === active) return;
      if (active) { active.a.classList.remove("is-active", "mod-active"); active.a.removeAttribute("aria-current"); }
      active = cur;
      cur.a.classList.add("is-active", "mod-active");
      cur.a.setAttribute("aria-current", "location");
      // Keep it in view inside the right column (not the page).
      var box = nav.closest(".site-body-right-column");
      if (box && box.scrollHeight > box.clientHeight + 1) {
        var r = cur.a.getBoundingClientRect(), br = box.getBoundingClientRect();
        if (r.top < br.top || r.bottom > br.bottom) box.scrollTop += r.top - br.top - br.height / 3;
      }
    }
    // Headings crossing the top 30 % of the window change the one being read.
    outlineObserver = new IntersectionObserver(mark, { rootMargin: "0px 0px -70% 0px", threshold: [0, 1] });
    heads.forEach(function (x) { outlineObserver.observe(x.h); });
    mark();
  }

  // --- explorer --------------------------------------------------------------

  function loadOpenSet() {
    try {
      var a = JSON.parse(sessionStorage.getItem(kOpenKey) || "[]");
      return Array.isArray(a) ? a.filter(function (s) { return typeof s === "string"; }) : [];
    } catch (e) { return []; }
  }

  function saveOpenSet(list) {
    try { sessionStorage.setItem(kOpenKey, JSON.stringify(list.slice(-200))); } catch (e) { /* ignore */ }
  }

  function rememberOpen(tree, open) {
    var list = loadOpenSet().filter(function (s) { return s !== tree; });
    if (open) list.push(tree);
    saveOpenSet(list);
  }

  function samePath(href, path) {
    try { return new URL(href, location.href).pathname === path; } catch (e) { return false; }
  }

  function Explorer(nav) {
    this.nav = nav;
    this.current = location.pathname;
    var cur = nav.querySelector("a[aria-current=page]");
    if (cur) this.current = new URL(cur.href, location.href).pathname;
    this.remembered = loadOpenSet();
    this.loaded = new WeakSet();
  }

  Explorer.prototype.start = function () {
    var self = this;
    var top = this.nav.querySelector("ul.tree[data-tree]");
    if (!top) return;
    this.fill(top, top.dataset.tree);
    this.nav.querySelectorAll("details[data-tree]").forEach(function (d) { self.wire(d); });
  };

  // A folder's details: fill on first open, remember open/closed.
  Explorer.prototype.wire = function (details) {
    var self = this;
    if (details.dataset.wired) return;
    details.dataset.wired = "1";
    details.addEventListener("toggle", function () {
      if (details.open) self.fillFolder(details);
      rememberOpen(details.dataset.tree, details.open);
    });
    if (!details.open && this.remembered.indexOf(details.dataset.tree) >= 0) details.open = true;
    if (details.open) this.fillFolder(details);
  };

  Explorer.prototype.fillFolder = function (details) {
    var ul = details.querySelector(":scope > ul.tree");
    if (!ul) { ul = make("ul", "tree tree-item-children"); details.appendChild(ul); }
    this.fill(ul, details.dataset.tree);
  };

  Explorer.prototype.fill = function (ul, url) {
    var self = this;
    if (this.loaded.has(ul) || !url || url.indexOf("/_/tree/") !== 0) return;
    this.loaded.add(ul);
    ul.setAttribute("aria-busy", "true");
    getJson(url).then(function (data) {
      self.render(ul, data);
    }).catch(function (err) {
      self.loaded.delete(ul);  // a later toggle tries again
      warn("explorer " + url, err);
    }).then(function () { ul.removeAttribute("aria-busy"); });
  };

  // Children of one level: folders first, then notes, in the JSON's order;
  // the server-rendered chain (the current note's folders) is reused, so it
  // stays open and is filled by its own fetch.
  Explorer.prototype.render = function (ul, data) {
    var self = this;
    var existing = Array.prototype.slice.call(ul.children);
    var byTree = new Map(), byHref = new Map();
    existing.forEach(function (li) {
      var d = li.querySelector(":scope > details[data-tree]");
      if (d) byTree.set(normPath(d.dataset.tree), li);
      var a = li.querySelector(":scope > a[href]");
      if (a) byHref.set(normPath(a.getAttribute("href")), li);
    });
    var items = [];
    var parent = ul.parentElement && ul.parentElement.querySelector(":scope > summary[data-path]");
    var base = parent ? parent.getAttribute("data-path") + "/" : "";
    (Array.isArray(data.folders) ? data.folders : []).slice(0, 5000).forEach(function (f) {
      if (!f || typeof f.tree !== "string" || typeof f.url !== "string") return;
      var li = byTree.get(normPath(f.tree));
      if (li) { byTree.delete(normPath(f.tree)); items.push(li); return; }
      items.push(self.folderItem(f, base));
    });
    (Array.isArray(data.notes) ? data.notes : []).slice(0, 5000).forEach(function (n) {
      if (!n || typeof n.url !== "string") return;
      var li = byHref.get(normPath(n.url));
      if (li) { byHref.delete(normPath(n.url)); items.push(li); return; }
      items.push(self.noteItem(n, base));
    });
    // Never lose the chain, even if the listing left it out.
    byTree.forEach(function (li) { items.push(li); });
    byHref.forEach(function (li) { if (li.querySelector("[aria-current]")) items.push(li); });
    var more = Number(data.more) || 0;
    if (more > 0 && typeof data.url === "string") {
      var mli = make("li", "tree-more tree-item");
      var ma = make("a", null, trn("more", more));
      ma.href = data.url;
      mli.appendChild(ma);
      items.push(mli);
    }
    var frag = doc.createDocumentFragment();
    items.forEach(function (li) { frag.appendChild(li); });
    ul.textContent = "";
    ul.appendChild(frag);
    ul.querySelectorAll(":scope > li > details[data-tree]").forEach(function (d) { self.wire(d); });
    this.revealCurrent();
  };

  // Items as the server renders the open branch (layout.cc AppendExplorer):
  // Obsidian Publish's tree classes, data-path = the vault path ("A/B",
  // "A/B/Title.md": a note's file name is taken to be its title).
  Explorer.prototype.folderItem = function (f, base) {
    var li = make("li", "tree-folder tree-item");
    var details = make("details");
    details.dataset.tree = f.tree;
    var summary = make("summary", "tree-item-self mod-collapsible");
    summary.setAttribute("data-path", typeof f.path === "string" ? f.path : base + String(f.name || ""));
    var a = make("a", "tree-item-inner", String(f.name || f.url));
    a.href = f.url;
    summary.appendChild(a);
    if (typeof f.notes === "number") summary.appendChild(make("span", "tree-count", String(f.notes)));
    details.appendChild(summary);
    details.appendChild(make("ul", "tree tree-item-children"));
    li.appendChild(details);
    return li;
  };

  Explorer.prototype.noteItem = function (n, base) {
    var li = make("li", "tree-note tree-item");
    var a = make("a", "tree-item-self");
    a.appendChild(make("span", "tree-item-inner", String(n.title || n.url)));
    a.href = n.url;
    a.setAttribute("data-path", (base || "") + String(n.title || "") + ".md");
    if (samePath(a.href, this.current)) { a.setAttribute("aria-current", "page"); a.classList.add("mod-active"); }
    li.appendChild(a);
    return li;
  };

  // Scroll the sidebar (not the page) so the current note is visible: the
  // nearest scrolling box between the link and the explorer.
  Explorer.prototype.revealCurrent = function () {
    var cur = this.nav.querySelector("a[aria-current=page]");
    if (!cur) return;
    var box = cur.parentElement;
    while (box && box !== this.nav.parentElement) {
      if (box.scrollHeight > box.clientHeight + 1 && /auto|scroll/.test(getComputedStyle(box).overflowY)) break;
      box = box.parentElement;
    }
    if (!box || box === this.nav.parentElement) return;
    var offset = cur.getBoundingClientRect().top - box.getBoundingClientRect().top;
    if (offset < 0 || offset > box.clientHeight - 24) box.scrollTop += offset - box.clientHeight / 3;
  };

  // After a client-side navigation: the current item moves to `path`, and
  // its folders open if the tree already holds it (nothing is fetched); the
  // other open folders and the explorer's scroll are kept.
  Explorer.prototype.setCurrent = function (path) {
    this.current = path;
    this.nav.querySelectorAll("a[aria-current]").forEach(function (a) {
      a.removeAttribute("aria-current");
      a.classList.remove("mod-active");
    });
    var hit = null;
    this.nav.querySelectorAll("a[href]").forEach(function (a) {
      if (!hit && samePath(a.href, path)) hit = a;
    });
    if (!hit) return;
    hit.setAttribute("aria-current", "page");
    hit.classList.add("mod-active");
    for (var d = hit.parentElement; d && d !== this.nav; d = d.parentElement) {
      if (d.tagName === "DETAILS" && d.dataset.tree && !d.open && d.querySelector("summary a") !== hit) d.open = true;
    }
    // The explorer's scroll stays where the reader left it.
  };

  var explorer = null;
  function initExplorer() {
    var nav = doc.querySelector("nav.explorer");
    if (!nav) return;
    explorer = new Explorer(nav);
    explorer.start();
  }

  // --- link previews ---------------------------------------------------------

  var kPreviewChars = 1500, kPreviewBlocks = 6, kPreviewCache = 64;
  var previewCache = new Map();

  function previewable(a) {
    if (!a || a.closest(".popover")) return false;
    var href = a.getAttribute("href") || "";
    if (href.charAt(0) !== "/" || href.charAt(1) === "/") return false;
    if (/^\/(_\/|assets\/|rss\.xml)/.test(href) || a.hasAttribute("download")) return false;
    return !!a.closest(".site-body");  // the note, the explorer, backlinks, related notes
  }

  // The target page, parsed: {title, article} or null when it is not a
  // 200 HTML page with an article. Cached per path.
  function loadPage(path) {
    if (previewCache.has(path)) return previewCache.get(path);
    // Through navigation's cache: a hovered link is fetched once for both.
    var p = fetchPage(new URL(path, location.href)).then(function (page) { return page.html; }, function () {
      return null;
    }).then(function (text) {
      if (text == null) return null;
      var parsed = new DOMParser().parseFromString(text, "text/html");
      var article = parsed.querySelector("article");
      if (!article) return null;
      article.querySelectorAll("script, noscript, iframe, object, embed, style, link").forEach(function (e) { e.remove(); });
      var h1 = article.querySelector("h1");
      var title = (h1 ? h1.textContent : parsed.title).trim();
      return { title: title, article: article };
    }).catch(function (err) { warn("preview " + path, err); return null; });
    previewCache.set(path, p);
    if (previewCache.size > kPreviewCache) previewCache.delete(previewCache.keys().next().value);
    return p;
  }

  // A copy safe to insert here: no handlers, no inline styles (CSP), no ids
  // that would collide with this page's.
  function importClean(node) {
    var copy = doc.importNode(node, true);
    var all = [copy].concat(Array.prototype.slice.call(copy.querySelectorAll ? copy.querySelectorAll("*") : []));
    all.forEach(function (e) {
      if (!e.attributes) return;
      Array.prototype.slice.call(e.attributes).forEach(function (at) {
        if (/^on/i.test(at.name) || at.name === "style" || at.name === "id") e.removeAttribute(at.name);
      });
    });
    return copy;
  }

  // The first blocks of the article (from #hash if it names an element),
  // skipping the title, the meta line and the table of contents.
  function excerpt(page, hash) {
    var article = page.article;
    var start = null;
    if (hash) {
      var id = hash;
      try { id = decodeURIComponent(hash); } catch (e) { /* keep raw */ }
      start = article.querySelector("[id=\"" + id.replace(/["\\]/g, "\\$&") + "\"]");
      while (start && start.parentElement && start.parentElement !== article) start = start.parentElement;
      if (start && start.parentElement !== article) start = null;
    }
    var node = start || article.firstElementChild;
    var out = doc.createDocumentFragment();
    var chars = 0, blocks = 0;
    for (; node && blocks < kPreviewBlocks && chars < kPreviewChars; node = node.nextElementSibling) {
      if (!start && node.tagName === "H1") continue;
      if (node.matches("p.meta, details.toc, nav")) continue;
      out.appendChild(importClean(node));
      chars += node.textContent.length;
      blocks++;
    }
    return out;
  }

  function Previews() {
    this.pop = null;
    this.anchor = null;
    this.showTimer = 0;
    this.hideTimer = 0;
    this.pressTimer = 0;
    this.suppressClick = false;
    this.token = 0;
  }

  Previews.prototype.start = function () {
    var self = this;
    doc.addEventListener("pointerover", function (e) {
      if (e.pointerType !== "mouse") return;
      if (self.pop && self.pop.contains(e.target)) { self.cancelHide(); return; }
      var a = e.target.closest && e.target.closest("a[href]");
      if (!previewable(a)) return;
      if (a === self.anchor) { self.cancelHide(); return; }
      clearTimeout(self.showTimer);
      self.showTimer = setTimeout(function () { self.show(a); }, 300);
    });
    doc.addEventListener("pointerout", function (e) {
      if (e.pointerType !== "mouse") return;
      var a = e.target.closest && e.target.closest("a[href]");
      var leavingPop = self.pop && self.pop.contains(e.target) && !self.pop.contains(e.relatedTarget);
      if (a && previewable(a) && !a.contains(e.relatedTarget)) clearTimeout(self.showTimer);
      if (leavingPop || (a && a === self.anchor && !(self.pop && self.pop.contains(e.relatedTarget)))) self.scheduleHide();
    });
    doc.addEventListener("touchstart", function (e) {
      var a = e.target.closest && e.target.closest("a[href]");
      if (self.pop && !self.pop.contains(e.target) && a !== self.anchor) self.hide();
      if (!previewable(a)) return;
      clearTimeout(self.pressTimer);
      self.pressTimer = setTimeout(function () { self.suppressClick = true; self.show(a); }, 500);
    }, { passive: true });
    ["touchend", "touchmove", "touchcancel"].forEach(function (t) {
      doc.addEventListener(t, function () { clearTimeout(self.pressTimer); }, { passive: true });
    });
    doc.addEventListener("click", function (e) {
      if (!self.suppressClick) return;
      self.suppressClick = false;
      if (self.anchor && self.anchor.contains(e.target)) { e.preventDefault(); e.stopPropagation(); }
    }, true);
    doc.addEventListener("contextmenu", function (e) {
      if (self.suppressClick && self.anchor && self.anchor.contains(e.target)) e.preventDefault();
    });
    // Keyboard users get the preview of the focused link.
    doc.addEventListener("focusin", function (e) {
      var a = e.target.closest && e.target.closest("a[href]");
      if (!previewable(a) || a === self.anchor) return;
      clearTimeout(self.showTimer);
      self.showTimer = setTimeout(function () { if (doc.activeElement === a) self.show(a); }, 300);
    });
    doc.addEventListener("focusout", function (e) {
      if (self.pop && (self.pop.contains(e.relatedTarget) || e.relatedTarget === self.anchor)) return;
      if (e.target === self.anchor || (self.pop && self.pop.contains(e.target))) self.scheduleHide();
    });
    doc.addEventListener("keydown", function (e) { if (e.key === "Escape") self.hide(); });
    window.addEventListener("resize", function () { self.hide(); });
  };

  Previews.prototype.cancelHide = function () { clearTimeout(this.hideTimer); };

  Previews.prototype.scheduleHide = function () {
    var self = this;
    clearTimeout(this.hideTimer);
    this.hideTimer = setTimeout(function () { self.hide(); }, 250);
  };

  Previews.prototype.hide = function () {
    clearTimeout(this.showTimer);
    clearTimeout(this.hideTimer);
    this.token++;
    if (this.pop) this.pop.remove();
    if (this.anchor) this.anchor.removeAttribute("aria-describedby");
    this.pop = null;
    this.anchor = null;
  };

  Previews.prototype.show = function (a) {
    var self = this;
    var url = new URL(a.href, location.href);
    var token = ++this.token;
    loadPage(url.pathname).then(function (page) {
      if (token !== self.token || !page || !a.isConnected) return;
      self.hide();
      self.token = token;
      var pop = make("div", "popover");
      pop.id = "folio-popover";
      pop.setAttribute("role", "tooltip");
      var title = make("a", "popover-title", page.title);
      title.href = url.pathname + url.search;
      pop.appendChild(title);
      var body = make("div", "popover-body");
      body.appendChild(excerpt(page, url.hash.slice(1)));
      pop.appendChild(body);
      pop.addEventListener("pointerenter", function () { self.cancelHide(); });
      doc.body.appendChild(pop);
      a.setAttribute("aria-describedby", pop.id);
      self.pop = pop;
      self.anchor = a;
      self.place(pop, a);
    });
  };

  // Below the link if it fits, else above; clamped to the viewport.
  Previews.prototype.place = function (pop, a) {
    var r = a.getClientRects()[0] || a.getBoundingClientRect();
    var vw = doc.documentElement.clientWidth, vh = window.innerHeight, m = 8;
    var w = pop.offsetWidth, h = pop.offsetHeight;
    var left = Math.max(m, Math.min(r.left, vw - w - m));
    var top = r.bottom + 6;
    if (top + h > vh - m && r.top - 6 - h >= m) top = r.top - 6 - h;
    top = Math.max(m, Math.min(top, vh - h - m));
    pop.style.left = (left + window.scrollX) + "px";
    pop.style.top = (top + window.scrollY) + "px";
  };

  // --- graph data ------------------------------------------------------------

  var kMaxChunks = 4096, kMaxNodes = 200000;
  var graphCache = new Map();

  // {urls, titles, index: Map url->i, src, dst (Int32Array edges)}.
  function loadGraph(url) {
    if (graphCache.has(url)) return graphCache.get(url);
    var p = getJson(url).then(function (meta) {
      var chunks = Array.isArray(meta.chunks) ? meta.chunks.filter(function (c) {
        return typeof c === "string" && c.indexOf("/_/") === 0;
      }).slice(0, kMaxChunks) : [];
      var results = new Array(chunks.length), next = 0;
      function worker() {
        if (next >= chunks.length) return Promise.resolve();
        var i = next++;
        return getJson(chunks[i]).then(function (c) { results[i] = c; return worker(); });
      }
      var workers = [];
      for (var k = 0; k < 4; k++) workers.push(worker());
      return Promise.all(workers).then(function () { return buildGraph(results); });
    });
    graphCache.set(url, p);
    return p;
  }

  // One spelling per path: the JSON may hold raw UTF-8 where an href or
  // location.pathname holds percent-escapes.
  function normPath(u) {
    try { return new URL(u, location.origin).pathname; } catch (e) { return u; }
  }

  function buildGraph(chunks) {
    var urls = [], titles = [], targets = [], index = new Map();
    chunks.forEach(function (c) {
      (c && Array.isArray(c.nodes) ? c.nodes : []).forEach(function (n) {
        if (!Array.isArray(n) || typeof n[0] !== "string" || urls.length >= kMaxNodes) return;
        var key = normPath(n[0]);
        if (index.has(key)) return;
        index.set(key, urls.length);
        urls.push(n[0]);
        titles.push(typeof n[1] === "string" ? n[1] : n[0]);
        targets.push(Array.isArray(n[2]) ? n[2] : []);
      });
    });
    var src = [], dst = [], seen = new Set();
    targets.forEach(function (list, s) {
      list.forEach(function (t) {
        var d = typeof t === "string" ? index.get(normPath(t)) : undefined;
        if (d === undefined || d === s) return;  // outside the graph, or a self link
        var key = s < d ? s * 1e6 + d : d * 1e6 + s;
        if (seen.has(key)) return;
        seen.add(key);
        src.push(s);
        dst.push(d);
      });
    });
    return { urls: urls, titles: titles, index: index, src: Int32Array.from(src), dst: Int32Array.from(dst) };
  }

  // --- force layout (Barnes-Hut) ---------------------------------------------

  // Positions and velocities of n bodies with springs on the edges; tick()
  // runs one step, alpha cools from 1 to alphaMin over maxTicks ticks.
  function Simulation(n, src, dst, maxTicks) {
    this.n = n;
    this.src = src;
    this.dst = dst;
    this.x = new Float64Array(n);
    this.y = new Float64Array(n);
    this.vx = new Float64Array(n);
    this.vy = new Float64Array(n);
    this.fixed = -1;
    this.alpha = 1;
    this.alphaMin = 0.002;
    this.decay = 1 - Math.pow(this.alphaMin, 1 / maxTicks);
    this.ticks = 0;
    this.cursor = 0;  // next body to repel in a tick split over frames
    this.maxTicks = maxTicks;
    var deg = this.degree = new Int32Array(n);
    for (var e = 0; e < src.length; e++) { deg[src[e]]++; deg[dst[e]]++; }
    // Phyllotaxis start: deterministic, no two bodies on one spot.
    for (var i = 0; i < n; i++) {
      var r = 10 * Math.sqrt(0.5 + i), a = i * Math.PI * (3 - Math.sqrt(5));
      this.x[i] = r * Math.cos(a);
      this.y[i] = r * Math.sin(a);
    }
    var cap = 4 * n + 8;
    this.tChild = new Int32Array(cap);  // first of 4 children, or -1
    this.tBody = new Int32Array(cap);   // the one body of a leaf, or -1
    this.tMass = new Float64Array(cap);
    this.tSx = new Float64Array(cap);
    this.tSy = new Float64Array(cap);
    this.tCx = new Float64Array(cap);
    this.tCy = new Float64Array(cap);
    this.tHalf = new Float64Array(cap);
    this.stack = new Int32Array(64 * 4 + 16);
  }

  Simulation.prototype.done = function () { return this.alpha < this.alphaMin || this.ticks >= this.maxTicks; };

  Simulation.prototype.buildTree = function () {
    var n = this.n, x = this.x, y = this.y;
    var x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    for (var i = 0; i < n; i++) {
      if (x[i] < x0) x0 = x[i]; if (x[i] > x1) x1 = x[i];
      if (y[i] < y0) y0 = y[i]; if (y[i] > y1) y1 = y[i];
    }
    var half = Math.max(x1 - x0, y1 - y0) / 2 + 1;
    this.used = 1;
    this.resetNode(0, (x0 + x1) / 2, (y0 + y1) / 2, half);
    for (var b = 0; b < n; b++) this.insert(b);
    // Sums become centres of mass once, not at every visit.
    for (var k = 0, sx = this.tSx, sy = this.tSy, m = this.tMass; k < this.used; k++) {
      if (m[k] > 0) { sx[k] /= m[k]; sy[k] /= m[k]; }
    }
  };

  Simulation.prototype.resetNode = function (k, cx, cy, half) {
    this.tChild[k] = -1;
    this.tBody[k] = -1;
    this.tMass[k] = 0;
    this.tSx[k] = 0;
    this.tSy[k] = 0;
    this.tCx[k] = cx;
    this.tCy[k] = cy;
    this.tHalf[k] = half;
  };

  Simulation.prototype.quadrant = function (k, px, py) {
    return (px >= this.tCx[k] ? 1 : 0) + (py >= this.tCy[k] ? 2 : 0);
  };

  Simulation.prototype.split = function (k) {
    var first = this.used, h = this.tHalf[k] / 2;
    this.used += 4;
    for (var q = 0; q < 4; q++) {
      this.resetNode(first + q, this.tCx[k] + (q & 1 ? h : -h), this.tCy[k] + (q & 2 ? h : -h), h);
    }
    this.tChild[k] = first;
    var old = this.tBody[k];
    this.tBody[k] = -1;
    var c = first + this.quadrant(k, this.x[old], this.y[old]);
    this.tBody[c] = old;
    this.tMass[c] = 1;
    this.tSx[c] = this.x[old];
    this.tSy[c] = this.y[old];
  };

  Simulation.prototype.insert = function (b) {
    var px = this.x[b], py = this.y[b], k = 0;
    for (var depth = 0; ; depth++) {
      this.tMass[k] += 1;
      this.tSx[k] += px;
      this.tSy[k] += py;
      if (this.tChild[k] >= 0) { k = this.tChild[k] + this.quadrant(k, px, py); continue; }
      if (this.tMass[k] === 1) { this.tBody[k] = b; return; }
      // An occupied leaf: split it (bodies on one spot just share the leaf).
      if (depth > 48 || this.used + 4 > this.tChild.length) return;
      this.tMass[k] -= 1;
      this.tSx[k] -= px;
      this.tSy[k] -= py;
      this.split(k);
      depth--;
    }
  };

  // Repulsion on every body from the tree: a cell seen under an angle
  // below theta counts as one mass at its centre. Locals, not this.*, in
  // the loop: it is the layout's hot path.
  Simulation.prototype.repel = function (from, to, strength) {
    var x = this.x, y = this.y, vx = this.vx, vy = this.vy;
    var child = this.tChild, body = this.tBody, mass = this.tMass, sx = this.tSx, sy = this.tSy, half = this.tHalf;
    var stack = this.stack, theta2 = 1.44;
    for (var i = from; i < to; i++) {
      var px = x[i], py = y[i], fx = 0, fy = 0, sp = 0;
      stack[sp++] = 0;
      while (sp > 0) {
        var k = stack[--sp], m = mass[k];
        if (m === 0) continue;
        var leaf = child[k] < 0;
        if (leaf && body[k] === i) { if (m === 1) continue; m -= 1; }
        var dx = sx[k] - px, dy = sy[k] - py;
        var d2 = dx * dx + dy * dy, size = half[k] * 2;
        if (!leaf && size * size > theta2 * d2) {
          if (sp + 4 > stack.length) continue;
          var c = child[k];
          stack[sp++] = c; stack[sp++] = c + 1; stack[sp++] = c + 2; stack[sp++] = c + 3;
          continue;
        }
        if (d2 < 1) { dx = (i % 7) - 3 || 1; dy = (i % 5) - 2 || 1; d2 = dx * dx + dy * dy; }
        var f = strength * m / d2;
        fx += dx * f;
        fy += dy * f;
      }
      vx[i] += fx;
      vy[i] += fy;
    }
  };

  // Runs one tick, or part of it when performance.now() passes `until`
  // (the repulsion goes in slices of bodies; positions move only at the
  // tick's end). Returns whether the tick finished.
  Simulation.prototype.step = function (until) {
    if (this.n > 1) {
      if (this.cursor === 0) this.buildTree();
      while (this.cursor < this.n) {
        var end = Math.min(this.n, this.cursor + 500);
        this.repel(this.cursor, end, -40 * this.alpha);
        this.cursor = end;
        if (this.cursor < this.n && performance.now() > until) return false;
      }
      this.cursor = 0;
    }
    this.finishTick();
    return true;
  };

  Simulation.prototype.tick = function () { this.step(Infinity); };

  Simulation.prototype.finishTick = function () {
    var n = this.n, alpha = this.alpha, x = this.x, y = this.y, vx = this.vx, vy = this.vy, deg = this.degree;
    // Springs toward 40 units, weaker on hubs (as d3-force does).
    for (var e = 0; e < this.src.length; e++) {
      var s = this.src[e], t = this.dst[e];
      var dx = x[t] + vx[t] - x[s] - vx[s], dy = y[t] + vy[t] - y[s] - vy[s];
      var l = Math.sqrt(dx * dx + dy * dy) || 1;
      var k = (l - 40) / l * alpha / Math.min(deg[s], deg[t]);
      var bias = deg[s] / (deg[s] + deg[t]);
      vx[t] -= dx * k * bias; vy[t] -= dy * k * bias;
      vx[s] += dx * k * (1 - bias); vy[s] += dy * k * (1 - bias);
    }
    for (var j = 0; j < n; j++) {
      vx[j] -= x[j] * 0.02 * alpha;  // a weak pull to the centre keeps islands near
      vy[j] -= y[j] * 0.02 * alpha;
      vx[j] *= 0.6;
      vy[j] *= 0.6;
      if (j === this.fixed) { vx[j] = 0; vy[j] = 0; continue; }
      x[j] += vx[j];
      y[j] += vy[j];
    }
    this.alpha += (0 - this.alpha) * this.decay;
    this.ticks++;
  };

  // --- graph view --------------------------------------------------------------

  function cssVar(name, fallback) {
    var v = getComputedStyle(doc.body).getPropertyValue(name).trim();
    return v || fallback;
  }

  // A canvas showing one Simulation: pan (drag), zoom (wheel, pinch), hover
  // label, click navigates. nodes: indices into graph for urls/titles.
  function GraphView(host, graph, nodes, src, dst, opts) {
    var self = this;
    this.host = host;
    this.graph = graph;
    this.nodes = nodes;
    this.opts = opts;
    this.canvas = make("canvas", "graph-canvas");
    this.canvas.setAttribute("role", "img");
    this.canvas.setAttribute("aria-label", tr("graph_label", { notes: trn("notes", nodes.length), links: trn("links", src.length) }));
    this.canvas.tabIndex = 0;
    host.appendChild(this.canvas);
    this.ctx = this.canvas.getContext("2d");
    this.sim = new Simulation(nodes.length, src, dst, opts.ticks);
    if (opts.center >= 0) { this.sim.fixed = opts.center; this.sim.x[opts.center] = 0; this.sim.y[opts.center] = 0; }
    this.neighbours = null;
    this.hover = -1;
    this.view = { k: 1, tx: 0, ty: 0 };
    this.userMoved = false;
    this.pointers = new Map();
    this.dirty = true;
    this.readColors();
    onThemeChange(function () { self.readColors(); self.request(); }, this.canvas);
    this.resize();
    if (window.ResizeObserver) new ResizeObserver(function () { self.resize(); }).observe(host);
    this.bindInput();
    this.startedAt = performance.now();
    host.dataset.state = "running";
    this.run();
  }

  GraphView.prototype.readColors = function () {
    this.colors = {
      edge: cssVar("--graph-line", "#888"), node: cssVar("--graph-node", "#888"),
      accent: cssVar("--graph-node-focused", "#66f"), fg: cssVar("--graph-text", "#000"),
      bg: cssVar("--background-primary", "#fff")
    };
  };

  GraphView.prototype.resize = function () {
    var dpr = window.devicePixelRatio || 1;
    var w = this.canvas.clientWidth, h = this.canvas.clientHeight;
    if (!w || !h) return;
    this.w = w;
    this.h = h;
    this.canvas.width = Math.round(w * dpr);
    this.canvas.height = Math.round(h * dpr);
    this.dpr = dpr;
    if (!this.userMoved) this.fit();
    this.request();
  };

  GraphView.prototype.fit = function () {
    var s = this.sim, x0 = Infinity, y0 = Infinity, x1 = -Infinity, y1 = -Infinity;
    for (var i = 0; i < s.n; i++) {
      x0 = Math.min(x0, s.x[i]); x1 = Math.max(x1, s.x[i]);
      y0 = Math.min(y0, s.y[i]); y1 = Math.max(y1, s.y[i]);
    }
    if (!this.w || !isFinite(x0)) return;
    var pad = 40, k = Math.min((this.w - 2 * pad) / Math.max(x1 - x0, 1), (this.h - 2 * pad) / Math.max(y1 - y0, 1));
    k = Math.min(k, 4);
    this.view = { k: k, tx: this.w / 2 - k * (x0 + x1) / 2, ty: this.h / 2 - k * (y0 + y1) / 2 };
  };

  // Ticks in slices of ~12 ms per animation frame, then one settled frame.
  // Big graphs are redrawn at most every 400 ms while they move, nodes
  // only: drawing costs more than ticking (30,000 edges: ~250 ms).
  GraphView.prototype.run = function () {
    var self = this, lastDraw = 0, every = this.sim.n > 2000 ? 400 : 0;
    function frame() {
      var now = performance.now(), until = now + 12;
      while (!self.sim.done() && performance.now() < until) self.sim.step(until);
      if (self.sim.done() || performance.now() - lastDraw >= every) {
        if (!self.userMoved) self.fit();
        self.draw();
        lastDraw = performance.now();
      }
      if (!self.sim.done()) { requestAnimationFrame(frame); return; }
      self.host.dataset.state = "settled";
      self.host.dataset.layoutMs = String(Math.round(performance.now() - self.startedAt));
      self.host.dataset.ticks = String(self.sim.ticks);
      if (self.opts.onSettled) self.opts.onSettled(self.host.dataset);
    }
    requestAnimationFrame(frame);
  };

  // While a big graph is panned or zoomed its frames skip the edges; they
  // come back 200 ms after the last move.
  GraphView.prototype.moved = function () {
    var self = this;
    this.userMoved = true;
    if (this.sim.n <= 2000) { this.request(); return; }
    this.panning = true;
    clearTimeout(this.panTimer);
    this.panTimer = setTimeout(function () { self.panning = false; self.request(); }, 200);
    this.request();
  };

  GraphView.prototype.request = function () {
    var self = this;
    if (this.pending) return;
    this.pending = true;
    requestAnimationFrame(function () { self.pending = false; self.draw(); });
  };

  GraphView.prototype.neighbourSet = function (i) {
    var set = new Set([i]), s = this.sim;
    for (var e = 0; e < s.src.length; e++) {
      if (s.src[e] === i) set.add(s.dst[e]);
      else if (s.dst[e] === i) set.add(s.src[e]);
    }
    return set;
  };

  GraphView.prototype.radius = function (i) { return 2.5 + Math.min(Math.sqrt(this.sim.degree[i]), 6); };

  GraphView.prototype.draw = function () {
    var ctx = this.ctx, s = this.sim, v = this.view, c = this.colors;
    if (!this.w) return;
    ctx.setTransform(this.dpr, 0, 0, this.dpr, 0, 0);
    ctx.clearRect(0, 0, this.w, this.h);
    ctx.setTransform(this.dpr * v.k, 0, 0, this.dpr * v.k, this.dpr * v.tx, this.dpr * v.ty);
    var hl = this.hoverSet || this.searchSet, moving = s.n > 2000 && (!s.done() || this.panning);
    ctx.lineWidth = 1 / v.k;
    ctx.strokeStyle = c.edge;
    ctx.globalAlpha = hl ? 0.3 : 1;  // --graph-line is a faint colour already (Obsidian's)
    ctx.beginPath();
    for (var e = 0; e < s.src.length && !moving; e++) {
      ctx.moveTo(s.x[s.src[e]], s.y[s.src[e]]);
      ctx.lineTo(s.x[s.dst[e]], s.y[s.dst[e]]);
    }
    ctx.stroke();
    ctx.globalAlpha = 1;
    if (this.hover >= 0) {
      ctx.strokeStyle = c.accent;
      ctx.lineWidth = 1.5 / v.k;
      ctx.beginPath();
      for (var f = 0; f < s.src.length; f++) {
        if (s.src[f] !== this.hover && s.dst[f] !== this.hover) continue;
        ctx.moveTo(s.x[s.src[f]], s.y[s.src[f]]);
        ctx.lineTo(s.x[s.dst[f]], s.y[s.dst[f]]);
      }
      ctx.stroke();
    }
    var scale = Math.max(0.6, Math.min(1, v.k)) / v.k;
    ctx.fillStyle = c.node;
    ctx.beginPath();
    for (var i = 0; i < s.n; i++) {
      if (hl && hl.has(i)) continue;
      var r = this.radius(i) * scale;
      // Under 2 px a square looks the same and fills ten times faster.
      if (r * v.k < 2) { ctx.fillRect(s.x[i] - r, s.y[i] - r, 2 * r, 2 * r); continue; }
      ctx.moveTo(s.x[i] + r, s.y[i]);
      ctx.arc(s.x[i], s.y[i], r, 0, 2 * Math.PI);
    }
    ctx.fill();
    var special = [];
    if (this.opts.center >= 0) special.push(this.opts.center);
    if (hl) hl.forEach(function (i) { special.push(i); });
    ctx.fillStyle = c.accent;
    ctx.beginPath();
    special.forEach(function (i) {
      var r = this.radius(i) * scale * (i === this.hover || i === this.opts.center ? 1.5 : 1);
      ctx.moveTo(s.x[i] + r, s.y[i]);
      ctx.arc(s.x[i], s.y[i], r, 0, 2 * Math.PI);
    }, this);
    ctx.fill();
    this.drawLabels(special);
  };

  GraphView.prototype.drawLabels = function (special) {
    var ctx = this.ctx, s = this.sim, v = this.view, self = this;
    ctx.setTransform(this.dpr, 0, 0, this.dpr, 0, 0);
    ctx.font = "12px system-ui, sans-serif";
    ctx.textAlign = "center";
    ctx.textBaseline = "top";
    ctx.lineJoin = "round";
    var list = s.n <= this.opts.allLabels ? Array.from({ length: s.n }, function (_, i) { return i; }) : special;
    // Zoomed in far enough that few notes are on screen: name them all.
    if (list === special && s.done()) {
      var inView = [];
      for (var j = 0; j < s.n && inView.length <= 60; j++) {
        var qx = s.x[j] * v.k + v.tx, qy = s.y[j] * v.k + v.ty;
        if (qx >= 0 && qy >= 0 && qx <= this.w && qy <= this.h) inView.push(j);
      }
      if (inView.length <= 60) list = inView.concat(special);
    }
    list.forEach(function (i) {
      var title = self.graph.titles[self.nodes[i]];
      if (title.length > 40) title = title.slice(0, 39) + "…";
      var sx = s.x[i] * v.k + v.tx, sy = s.y[i] * v.k + v.ty + self.radius(i) + 3;
      ctx.lineWidth = 3;
      ctx.strokeStyle = self.colors.bg;
      ctx.strokeText(title, sx, sy);
      ctx.fillStyle = i === self.hover ? self.colors.accent : self.colors.fg;
      ctx.fillText(title, sx, sy);
    });
  };

  GraphView.prototype.nodeAt = function (px, py) {
    var s = this.sim, v = this.view, best = -1, bestD = Infinity;
    var wx = (px - v.tx) / v.k, wy = (py - v.ty) / v.k, reach = 10 / v.k;
    for (var i = 0; i < s.n; i++) {
      var dx = s.x[i] - wx, dy = s.y[i] - wy, d = dx * dx + dy * dy;
      if (d < bestD) { bestD = d; best = i; }
    }
    return bestD <= reach * reach ? best : -1;
  };

  GraphView.prototype.setHover = function (i) {
    if (i === this.hover) return;
    this.hover = i;
    this.hoverSet = i >= 0 ? this.neighbourSet(i) : null;
    this.canvas.classList.toggle("graph-pointer", i >= 0);
    this.canvas.title = i >= 0 ? this.graph.titles[this.nodes[i]] : "";
    this.request();
  };

  GraphView.prototype.zoomAt = function (px, py, factor) {
    var v = this.view, k = Math.max(0.02, Math.min(20, v.k * factor));
    v.tx = px - (px - v.tx) * (k / v.k);
    v.ty = py - (py - v.ty) * (k / v.k);
    v.k = k;
    this.moved();
  };

  GraphView.prototype.bindInput = function () {
    var self = this, cv = this.canvas, moved = 0, last = null, pinch = 0;
    function local(e) { var r = cv.getBoundingClientRect(); return [e.clientX - r.left, e.clientY - r.top]; }
    cv.addEventListener("wheel", function (e) {
      e.preventDefault();
      var p = local(e);
      self.zoomAt(p[0], p[1], Math.exp(-e.deltaY * (e.deltaMode === 1 ? 0.05 : 0.0015)));
    }, { passive: false });
    cv.addEventListener("pointerdown", function (e) {
      cv.setPointerCapture(e.pointerId);
      self.pointers.set(e.pointerId, local(e));
      moved = 0;
      last = local(e);
      pinch = 0;
    });
    cv.addEventListener("pointermove", function (e) {
      var p = local(e);
      if (!self.pointers.has(e.pointerId)) { self.setHover(self.nodeAt(p[0], p[1])); return; }
      self.pointers.set(e.pointerId, p);
      if (self.pointers.size === 2) {
        var pts = Array.from(self.pointers.values());
        var d = Math.hypot(pts[0][0] - pts[1][0], pts[0][1] - pts[1][1]);
        if (pinch) self.zoomAt((pts[0][0] + pts[1][0]) / 2, (pts[0][1] + pts[1][1]) / 2, d / pinch);
        pinch = d;
        moved += 10;
        return;
      }
      moved += Math.abs(p[0] - last[0]) + Math.abs(p[1] - last[1]);
      self.view.tx += p[0] - last[0];
      self.view.ty += p[1] - last[1];
      last = p;
      if (moved > 3) self.moved();
    });
    function up(e) {
      if (!self.pointers.has(e.pointerId)) return;
      self.pointers.delete(e.pointerId);
      pinch = 0;
      if (e.type !== "pointerup" || moved > 5 || self.pointers.size) return;
      var p = local(e), i = self.nodeAt(p[0], p[1]);
      if (i >= 0) location.href = self.graph.urls[self.nodes[i]];
    }
    cv.addEventListener("pointerup", up);
    cv.addEventListener("pointercancel", up);
    cv.addEventListener("pointerleave", function (e) { if (e.pointerType === "mouse") self.setHover(-1); });
  };

  // Once the element is near the viewport (or at once without
  // IntersectionObserver).
  function whenNear(el, fn) {
    if (!window.IntersectionObserver) { fn(); return; }
    var io = new IntersectionObserver(function (entries) {
      if (!entries.some(function (e) { return e.isIntersecting; })) return;
      io.disconnect();
      fn();
    }, { rootMargin: "300px" });
    io.observe(el);
  }

  // The note, its links and backlinks (depth 1 or 2), capped.
  function neighbourhood(graph, center, depth, cap) {
    var adj = new Map();
    function add(a, b) { if (!adj.has(a)) adj.set(a, []); adj.get(a).push(b); }
    for (var e = 0; e < graph.src.length; e++) { add(graph.src[e], graph.dst[e]); add(graph.dst[e], graph.src[e]); }
    var picked = [center], local = new Map([[center, 0]]), frontier = [center];
    for (var d = 0; d < depth; d++) {
      var next = [];
      frontier.forEach(function (u) {
        (adj.get(u) || []).forEach(function (w) {
          if (local.has(w) || picked.length >= cap) return;
          local.set(w, picked.length);
          picked.push(w);
          next.push(w);
        });
      });
      frontier = next;
    }
    var src = [], dst = [];
    for (var f = 0; f < graph.src.length; f++) {
      var a = local.get(graph.src[f]), b = local.get(graph.dst[f]);
      if (a !== undefined && b !== undefined) { src.push(a); dst.push(b); }
    }
    return { nodes: picked, src: Int32Array.from(src), dst: Int32Array.from(dst) };
  }

  function initLocalGraph(root) {
    var section = root.querySelector("section.local-graph[data-graph][data-url]");
    if (!section || !window.CanvasRenderingContext2D) return;
    section.hidden = false;
    var bar = make("div", "graph-controls");
    var label = make("label");
    var box = make("input");
    box.type = "checkbox";
    label.appendChild(box);
    label.appendChild(doc.createTextNode(" Depth 2"));
    bar.appendChild(label);
    section.appendChild(bar);
    var host = make("div", "graph-host");
    section.appendChild(host);
    section.dataset.state = "waiting";
    whenNear(section, function () {
      section.dataset.state = "loading";
      loadGraph(section.dataset.graph).then(function (graph) {
        var center = graph.index.get(normPath(section.dataset.url));
        if (center === undefined) { section.hidden = true; return; }
        function draw() {
          host.textContent = "";
          var hood = neighbourhood(graph, center, box.checked ? 2 : 1, 300);
          section.dataset.state = "running";
          new GraphView(host, graph, hood.nodes, hood.src, hood.dst, {
            ticks: 200, center: 0, allLabels: 40, onSettled: function () { section.dataset.state = "settled"; }
          });
          section.dataset.nodes = String(hood.nodes.length);
        }
        box.addEventListener("change", draw);
        draw();
      }).catch(function (err) { section.hidden = true; warn("local graph", err); });
    });
  }

  function initGlobalGraph(root) {
    var host = root.querySelector(".global-graph[data-graph]");
    if (!host || !window.CanvasRenderingContext2D) return;
    host.dataset.state = "loading";
    var t0 = performance.now();
    loadGraph(host.dataset.graph).then(function (graph) {
      host.dataset.loadMs = String(Math.round(performance.now() - t0));
      host.dataset.nodes = String(graph.urls.length);
      host.dataset.links = String(graph.src.length);
      var all = new Array(graph.urls.length);
      for (var i = 0; i < all.length; i++) all[i] = i;
      var ticks = graph.urls.length > 5000 ? 120 : 300;
      var view = new GraphView(host, graph, all, graph.src, graph.dst, { ticks: ticks, center: -1, allLabels: 30 });
      addGraphSearch(host, view);
    }).catch(function (err) { host.dataset.state = "failed"; warn("graph", err); });
  }

  // Highlights the notes whose title contains the typed text.
  function addGraphSearch(host, view) {
    var input = make("input", "graph-search");
    input.type = "search";
    input.placeholder = tr("highlight");
    input.setAttribute("aria-label", tr("highlight_label"));
    host.insertBefore(input, host.firstChild);
    input.addEventListener("input", function () {
      var q = input.value.trim().toLowerCase(), set = new Set();
      if (q) view.nodes.forEach(function (g, i) { if (view.graph.titles[g].toLowerCase().indexOf(q) >= 0 && set.size < 500) set.add(i); });
      view.searchSet = set.size ? set : null;
      view.request();
    });
  }

  // --- search box --------------------------------------------------------------
  // The header's search form answers as the reader types, on every page: a
  // WAI-ARIA combobox (the input) over a listbox of up to kBoxHits notes from
  // /_/search?format=json, then a last option "All results for …" (the search
  // page). Ctrl-K / Cmd-K and "/" focus the box. Without this the form is a
  // plain GET to /_/search; on /_/search itself the page's own script updates
  // the results in place, so only the shortcuts are added there. Snippets
  // arrive escaped with <mark> tags: they are split on the tags and written
  // as text, never parsed as HTML.
  var kBoxHits = 8;
  var kBoxDelayMs = 120;

  function decodeEntities(s) {
    return s.replace(/&(amp|lt|gt|quot|#39|#x27);/g, function (m, n) {
      return { amp: "&", lt: "<", gt: ">", quot: "\"", "#39": "'", "#x27": "'" }[n];
    });
  }

  // "a <mark>b</mark> c" -> text, <mark>text</mark>, text; anything else
  // stays text, tags included.
  function appendSnippet(el, snippet) {
    var parts = String(snippet).split(/(<mark>[^<]*<\/mark>)/);
    for (var i = 0; i < parts.length; i++) {
      var m = /^<mark>([^<]*)<\/mark>$/.exec(parts[i]);
      if (m) el.appendChild(make("mark", null, decodeEntities(m[1])));
      else if (parts[i]) el.appendChild(doc.createTextNode(decodeEntities(parts[i])));
    }
  }

  function isTypingTarget(t) {
    if (!t || !t.tagName) return false;
    return /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName) || t.isContentEditable;
  }

  function SearchBox(form, input) {
    this.form = form;
    this.input = input;
    this.timer = 0;
    this.seq = 0;
    this.ctl = null;
    this.active = -1;
    this.options = [];
    this.shown = "";
  }

  SearchBox.prototype.build = function () {
    var self = this, input = this.input;
    this.panel = make("div", "search-panel");
    this.panel.hidden = true;
    this.list = make("ul", "search-list");
    this.list.id = "search-box-list";
    this.list.setAttribute("role", "listbox");
    this.list.setAttribute("aria-label", tr("results_label"));
    this.empty = make("p", "search-panel-empty", tr("no_results"));
    this.empty.setAttribute("role", "status");
    this.panel.appendChild(this.empty);
    this.panel.appendChild(this.list);
    this.form.appendChild(this.panel);
    input.setAttribute("role", "combobox");
    input.setAttribute("aria-autocomplete", "list");
    input.setAttribute("aria-controls", this.list.id);
    input.setAttribute("aria-expanded", "false");
    input.addEventListener("input", function (e) {
      if (e.isComposing) return;
      clearTimeout(self.timer);
      self.timer = setTimeout(function () { self.run(); }, kBoxDelayMs);
    });
    input.addEventListener("keydown", function (e) { self.onKey(e); });
    input.addEventListener("focus", function () { if (self.shown && self.shown === input.value.trim()) self.open(); });
    // Closed when focus or a press goes elsewhere. A press on the panel
    // keeps the focus in the field: browsers that do not focus a pressed
    // link (Safari) would otherwise close the panel before its click.
    this.panel.addEventListener("mousedown", function (e) { e.preventDefault(); });
    this.form.addEventListener("focusout", function (e) {
      if (!self.form.contains(e.relatedTarget)) self.close();
    });
    doc.addEventListener("pointerdown", function (e) {
      if (!self.form.contains(e.target)) self.close();
    });
    this.list.addEventListener("pointermove", function (e) {
      var li = e.target.closest && e.target.closest("[role=option]");
      if (li) self.select(self.options.indexOf(li), false);
    });
  };

  SearchBox.prototype.run = function () {
    var self = this, q = this.input.value.trim();
    var n = ++this.seq;
    if (this.ctl) this.ctl.abort();
    this.ctl = null;
    if (!q) { this.render(q, []); return; }
    var params = new URLSearchParams(new FormData(this.form));
    params.set("q", q);
    params.set("k", String(kBoxHits));
    params.set("format", "json");
    var ctl = window.AbortController ? new AbortController() : null;
    this.ctl = ctl;
    fetch("/_/search?" + params, { credentials: "same-origin", headers: { Accept: "application/json" }, signal: ctl ? ctl.signal : undefined })
      .then(function (r) { return r.status === 200 ? r.json() : null; })
      .then(function (data) {
        if (n !== self.seq) return;  // a newer query is on its way: drop this one
        if (data && Array.isArray(data.hits)) self.render(q, data.hits);
        else self.close();  // errors are quiet: the form still submits to /_/search
      })
      .catch(function () { if (n === self.seq) self.close(); });
  };

  SearchBox.prototype.render = function (q, hits) {
    this.shown = q;
    this.active = -1;
    this.options = [];
    this.input.removeAttribute("aria-activedescendant");
    this.list.replaceChildren();
    if (!q) { this.close(); return; }
    var self = this;
    hits.slice(0, kBoxHits).forEach(function (h) {
      if (!h || typeof h.url !== "string" || h.url.charAt(0) !== "/" || h.url.charAt(1) === "/") return;
      var a = self.option(h.url);
      a.appendChild(make("span", "search-hit-title", h.title || h.url));
      if (h.breadcrumb) a.appendChild(make("span", "search-hit-crumb", h.breadcrumb));
      if (h.snippet) appendSnippet(a.appendChild(make("span", "search-hit-snippet")), h.snippet);
    });
    this.empty.hidden = this.options.length > 0;
    var all = this.option("/_/search?" + new URLSearchParams({ q: q }));
    all.parentNode.classList.add("search-all");
    all.textContent = tr("all_results", { q: q });
    this.open();
  };

  // A new option (li) holding a link to href; returns the link.
  SearchBox.prototype.option = function (href) {
    var li = make("li", "search-option");
    li.id = "search-box-opt-" + this.options.length;
    li.setAttribute("role", "option");
    li.setAttribute("aria-selected", "false");
    var a = make("a");
    a.href = href;
    a.tabIndex = -1;
    li.appendChild(a);
    this.list.appendChild(li);
    this.options.push(li);
    return a;
  };

  SearchBox.prototype.open = function () {
    if (!this.options.length) return;
    this.panel.hidden = false;
    this.input.setAttribute("aria-expanded", "true");
  };

  SearchBox.prototype.close = function () {
    this.panel.hidden = true;
    this.input.setAttribute("aria-expanded", "false");
    this.select(-1, false);
  };

  SearchBox.prototype.isOpen = function () { return !this.panel.hidden; };

  SearchBox.prototype.select = function (i, scroll) {
    if (this.active >= 0 && this.options[this.active]) {
      this.options[this.active].setAttribute("aria-selected", "false");
      this.options[this.active].classList.remove("active");
    }
    this.active = i;
    var li = this.options[i];
    if (!li) { this.active = -1; this.input.removeAttribute("aria-activedescendant"); return; }
    li.setAttribute("aria-selected", "true");
    li.classList.add("active");
    this.input.setAttribute("aria-activedescendant", li.id);
    if (scroll && li.scrollIntoView) li.scrollIntoView({ block: "nearest" });
  };

  SearchBox.prototype.onKey = function (e) {
    var n = this.options.length;
    if (e.key === "ArrowDown" || e.key === "ArrowUp") {
      if (!n) return;
      e.preventDefault();
      if (!this.isOpen()) { this.open(); if (e.key === "ArrowUp") this.select(n - 1, true); return; }
      var step = e.key === "ArrowDown" ? 1 : -1;
      var next = this.active < 0 ? (step > 0 ? 0 : n - 1) : this.active + step;
      this.select(next >= n || next < 0 ? -1 : next, true);
    } else if (e.key === "Enter" && !e.isComposing) {
      if (!this.isOpen() || this.active < 0) return;  // the form submits to /_/search
      e.preventDefault();
      var a = this.options[this.active].querySelector("a");
      if (a) location.assign(a.href);
    } else if (e.key === "Escape" && this.isOpen()) {
      e.preventDefault();
      e.stopPropagation();
      this.close();
    }
  };

  function initSearchBox() {
    var form = doc.querySelector(".site-header form.search-box[role=search]");
    var input = form && form.querySelector("input[name=q]");
    if (!input) return;
    var mac = /Mac|iPhone|iPad/.test(navigator.platform || navigator.userAgent || "");
    input.placeholder = tr("search_shortcut", { k: mac ? "\u2318" : "Ctrl" });
    input.setAttribute("aria-keyshortcuts", "Control+K Meta+K /");
    doc.addEventListener("keydown", function (e) {
      var k = e.key && e.key.length === 1 ? e.key.toLowerCase() : e.key;
      var chord = k === "k" && (e.ctrlKey || e.metaKey) && !e.altKey && !e.shiftKey;
      var slash = k === "/" && !e.ctrlKey && !e.metaKey && !e.altKey && !isTypingTarget(e.target);
      if (!chord && !slash) return;
      e.preventDefault();
      input.focus();
      input.select();
    });
    if (doc.getElementById("search-results")) return;  // /_/search: the page's own live results
    new SearchBox(form, input).build();
  }

  // --- mermaid ----------------------------------------------------------------
  // The page's inline start script draws the first diagrams (mermaid's own
  // start-on-load, after this script ran). Each diagram's source is kept in
  // data-folio-source before that, so a theme switch redraws it in the new
  // theme, and diagrams that arrive by navigation are drawn here.

  function mermaidTheme() { return effectiveTheme() === "dark" ? "dark" : "default"; }

  function drawDiagrams(nodes) {
    if (!nodes.length || !window.mermaid) return;
    try {
      window.mermaid.initialize({ startOnLoad: false, theme: mermaidTheme() });
      var p = window.mermaid.run({ nodes: nodes });
      if (p && p.catch) p.catch(function (err) { warn("mermaid", err); });
    } catch (err) { warn("mermaid", err); }
  }

  function initMermaid(root) {
    var nodes = Array.prototype.filter.call(root.querySelectorAll("pre.mermaid"), function (n) {
      return !n.hasAttribute("data-folio-source") && !n.hasAttribute("data-processed");
    });
    nodes.forEach(function (n) { n.setAttribute("data-folio-source", n.textContent); });
    if (root !== doc) drawDiagrams(nodes);  // at start the page's own start script draws them
  }

  onThemeChange(function () {
    var nodes = Array.prototype.filter.call(doc.querySelectorAll("pre.mermaid[data-folio-source]"), function (n) {
      return n.hasAttribute("data-processed");  // drawn already; the others are drawn in the new theme anyway
    });
    nodes.forEach(function (n) {
      n.removeAttribute("data-processed");
      n.textContent = n.getAttribute("data-folio-source");
    });
    drawDiagrams(nodes);
  });

  // --- navigation -------------------------------------------------------------
  // Same-origin links to pages swap every [data-folio-swap=NAME] element for
  // the fetched page's element of the same name, keep the explorer (its open
  // folders and scroll), and update title, body classes, history and focus.
  // Anything unexpected (another origin, a file, modifier keys, a response
  // that is not a 200 HTML page, other names to swap, a script or stylesheet
  // the current page lacks, an exception) is a normal page load instead.
  // Pages are prefetched on intent (hover, focus, touch) into a small cache.

  var kNavCacheEntries = 8, kNavCacheMs = 30000, kPrefetchDelayMs = 65;
  var kNotPages = /\.(xml|json|txt|js|css|png|jpe?g|gif|webp|avif|svg|ico|pdf|zip|gz|mp3|mp4|webm|ogg|wav|csv)$/i;
  var navCache = new Map();  // path + search -> { at, promise }
  var navToken = 0;
  var shownKey = location.pathname + location.search;

  // The URL to swap to for a click (or intent) on `a`, or null for the
  // browser's own behaviour.
  function navTarget(a, e) {
    if (!a || !(a instanceof HTMLAnchorElement) || !a.hasAttribute("href")) return null;
    if ((a.target && a.target !== "_self") || a.hasAttribute("download")) return null;
    if (e && (e.defaultPrevented || e.button > 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey)) return null;
    var u;
    try { u = new URL(a.href, location.href); } catch (err) { return null; }
    if (u.origin !== location.origin || !/^https?:$/.test(u.protocol)) return null;
    if (u.pathname.indexOf("/assets/") === 0 || kNotPages.test(u.pathname)) return null;
    if (u.pathname + u.search === shownKey) return null;  // the same page (a #fragment): the browser scrolls
    if (!doc.querySelector("[data-folio-swap]")) return null;
    return u;
  }

  function fetchPage(u) {
    var key = u.pathname + u.search, now = Date.now();
    var hit = navCache.get(key);
    if (hit && now - hit.at < kNavCacheMs) return hit.promise;
    var promise = fetch(key, { credentials: "same-origin", headers: { Accept: "text/html" } }).then(function (r) {
      if (r.status !== 200) throw new Error(key + " answered HTTP " + r.status);
      if (!/^text\/html/i.test(r.headers.get("content-type") || "")) throw new Error(key + " is not an HTML page");
      var final = new URL(r.url || key, location.href);
      if (final.origin !== location.origin) throw new Error(key + " redirects to another origin");
      return r.text().then(function (t) {
        if (t.length > kMaxPageBytes) throw new Error(key + " is larger than " + kMaxPageBytes + " bytes");
        return { url: final, html: t };
      });
    });
    promise.catch(function () { if (navCache.get(key) && navCache.get(key).promise === promise) navCache.delete(key); });
    navCache.delete(key);
    navCache.set(key, { at: now, promise: promise });
    while (navCache.size > kNavCacheEntries) navCache.delete(navCache.keys().next().value);
    return promise;
  }

  function swapElements(d) {
    var m = new Map();
    d.querySelectorAll("[data-folio-swap]").forEach(function (el) { m.set(el.getAttribute("data-folio-swap"), el); });
    return m;
  }

  // Every script and stylesheet the new page loads, the current one has:
  // else its policy or its code may differ (a diagram page, a new release).
  function sameResources(d) {
    function set(root, sel, attr) {
      var s = new Set();
      root.querySelectorAll(sel).forEach(function (el) {
        s.add(new URL(el.getAttribute(attr), location.href).href);
      });
      return s;
    }
    var ok = true;
    [["script[src]", "src"], ["link[rel~=stylesheet][href]", "href"]].forEach(function (q) {
      var have = set(doc, q[0], q[1]);
      set(d, q[0], q[1]).forEach(function (u) { if (!have.has(u)) ok = false; });
    });
    return ok && d.querySelectorAll("script:not([src])").length <= doc.querySelectorAll("script:not([src])").length;
  }

  function copyHead(d) {
    doc.title = d.title;
    if (d.documentElement.lang) root.lang = d.documentElement.lang;
    ["meta[name=description]", "meta[property='og:title']", "meta[property='og:description']",
     "meta[property='og:url']", "link[rel=canonical]"].forEach(function (sel) {
      var mine = doc.head.querySelector(sel), theirs = d.head && d.head.querySelector(sel);
      var attr = sel.indexOf("link") === 0 ? "href" : "content";
      if (mine && theirs) mine.setAttribute(attr, theirs.getAttribute(attr) || "");
    });
    // Publish's page modifiers (has-outline, has-graph) are the new page's.
    var box = doc.querySelector(".published-container"), theirBox = d.querySelector(".published-container");
    if (box && theirBox) {
      var open = box.classList.contains("is-left-column-open");
      box.className = theirBox.className;
      box.classList.toggle("is-left-column-open", open);
    }
    // The note's cssclasses are the new page's; the theme class stays.
    var theme = Array.prototype.filter.call(doc.body.classList, function (c) { return /^theme-(light|dark)$/.test(c); });
    doc.body.className = d.body.className;
    doc.body.classList.remove("theme-light", "theme-dark");
    theme.forEach(function (c) { doc.body.classList.add(c); });
    if (!doc.body.className) doc.body.removeAttribute("class");
  }

  // Replaces the page by `d` (fetched from `u`); throws, changing nothing,
  // when it cannot.
  function swapIn(d, u, push) {
    var mine = swapElements(doc), theirs = swapElements(d);
    if (mine.size === 0 || mine.size !== theirs.size) throw new Error("the pages swap different parts");
    mine.forEach(function (el, name) { if (!theirs.has(name)) throw new Error("the new page has no " + name); });
    if (!sameResources(d)) throw new Error("the new page needs other scripts or styles");
    // The header and explorer stay: their words are this page's language.
    if ((d.documentElement.lang || "en") !== (root.lang || "en")) throw new Error("the new page is in another language");
    var pop = doc.getElementById("folio-popover");
    if (pop) pop.remove();
    if (push) {
      saveScroll();
      history.pushState({ folio: 1, scroll: 0 }, "", u.pathname + u.search + u.hash);
    }
    var parents = new Set(), fresh = [];
    mine.forEach(function (el, name) {
      var n = doc.importNode(theirs.get(name), true);
      el.replaceWith(n);
      parents.add(n.parentNode);
      fresh.push(n);
    });
    copyHead(d);
    shownKey = u.pathname + u.search;
    if (explorer) explorer.setCurrent(u.pathname);
    runPageInits(parents.size === 1 ? parents.values().next().value : doc);
    return fresh;
  }

  function focusContent(fresh) {
    var target = fresh[0].querySelector("h1") || fresh[0];
    if (!target.hasAttribute("tabindex")) target.setAttribute("tabindex", "-1");
    try { target.focus({ preventScroll: true }); } catch (err) { target.focus(); }
  }

  function scrollTo(u, y) {
    var id = u.hash ? decodeURIComponent(u.hash.slice(1)) : "";
    var el = id && doc.getElementById(id);
    if (y != null) window.scrollTo(0, y);
    else if (el) el.scrollIntoView();
    else window.scrollTo(0, 0);
  }

  var scrollTimer = 0;
  function saveScroll() {
    clearTimeout(scrollTimer);
    var st = history.state && typeof history.state === "object" ? history.state : {};
    try { history.replaceState(Object.assign({}, st, { folio: 1, scroll: window.scrollY }), ""); } catch (err) { /* ignore */ }
  }

  function navigate(u, push, y) {
    var token = ++navToken;
    fetchPage(u).then(function (page) {
      if (token !== navToken) return;
      var d = new DOMParser().parseFromString(page.html, "text/html");
      var at = new URL(page.url.href);
      at.hash = u.hash;
      var fresh = swapIn(d, at, push);
      scrollTo(at, y);
      focusContent(fresh);
    }).catch(function () {
      if (token !== navToken) return;
      // Expected (another kind of page, an error page): quietly a full load.
      if (push) location.assign(u.href);
      else location.reload();
    });
  }

  function initNavigation() {
    if (!window.fetch || !window.DOMParser || !history.pushState || !doc.querySelector("[data-folio-swap]")) return;
    if ("scrollRestoration" in history) history.scrollRestoration = "manual";
    saveScroll();
    doc.addEventListener("click", function (e) {
      var a = e.target.closest && e.target.closest("a[href]");
      var u = navTarget(a, e);
      if (!u) return;
      e.preventDefault();
      navigate(u, true, null);
    });
    window.addEventListener("popstate", function (e) {
      var key = location.pathname + location.search;
      if (key === shownKey) return;  // a #fragment on the same page
      var y = e.state && typeof e.state.scroll === "number" ? e.state.scroll : null;
      navigate(new URL(location.href), false, y);
    });
    window.addEventListener("scroll", function () {
      clearTimeout(scrollTimer);
      scrollTimer = setTimeout(saveScroll, 150);
    }, { passive: true });
    var intentTimer = 0;
    function intent(e, delay) {
      var a = e.target.closest && e.target.closest("a[href]");
      var u = navTarget(a, null);
      if (!u) return;
      clearTimeout(intentTimer);
      intentTimer = setTimeout(function () { fetchPage(u).catch(function () { /* the click loads it normally */ }); }, delay);
    }
    doc.addEventListener("pointerover", function (e) { if (e.pointerType === "mouse") intent(e, kPrefetchDelayMs); });
    doc.addEventListener("pointerout", function () { clearTimeout(intentTimer); });
    doc.addEventListener("focusin", function (e) { intent(e, kPrefetchDelayMs); });
    doc.addEventListener("touchstart", function (e) { intent(e, 0); }, { passive: true });
  }

  onPage(initOutline);
  onPage(initLocalGraph);
  onPage(initGlobalGraph);
  onPage(initMermaid);

  function start() {
    var parts = [initTheme, initPanels, initSearchBox, initExplorer, function () { new Previews().start(); }, initNavigation];
    parts.forEach(function (fn) {
      try { fn(); } catch (err) { warn(fn.name || "init", err); }
    });
    runPageInits(doc);
  }

  if (doc.readyState === "loading") doc.addEventListener("DOMContentLoaded", start);
  else start();
})();
