// The page's readable content as Markdown, at most a.max characters: the
// main content (main, article, [role=main] when they hold most of the
// text; else the body without navigation, banners and footers), headings,
// paragraphs, links, images, lists, quotes, code and tables. Hidden
// elements, scripts and styles are left out.
(function (a) {
  const max = a.max;
  const SKIP = new Set(["SCRIPT", "STYLE", "NOSCRIPT", "TEMPLATE", "SVG", "CANVAS", "IFRAME", "HEAD", "OBJECT", "EMBED", "AUDIO", "VIDEO", "MAP"]);
  const CHROME = new Set(["NAV", "FOOTER", "ASIDE"]);
  const INLINE = new Set(["A", "SPAN", "STRONG", "B", "EM", "I", "CODE", "SMALL", "SUB", "SUP", "LABEL", "ABBR", "TIME", "MARK",
    "U", "S", "DEL", "INS", "Q", "CITE", "KBD", "SAMP", "VAR", "BDI", "BDO", "WBR", "IMG", "BUTTON", "DATA", "FONT"]);
  const body = document.body || document.documentElement;
  if (!body) return { text: "", length: 0 };
  let root = body;
  const total = (body.innerText || "").length;
  for (const c of document.querySelectorAll("main, article, [role=main]")) {
    if ((c.innerText || "").length > total * 0.4) { root = c; break; }
  }
  const dropChrome = root === body;
  const shown = (e) => (typeof e.checkVisibility === "function" ? e.checkVisibility() : !e.hidden);
  const esc = (s) => s.replace(/([\\`*_\[\]])/g, "\\$1");
  const abs = (u) => { try { return new URL(u, document.baseURI).href; } catch (err) { return ""; } };
  let out = 0;
  const budget = (s) => { out += s.length; return s; };

  function inline(n, depth) {
    if (depth > 200 || out > max) return "";
    if (n.nodeType === Node.TEXT_NODE) return budget(esc(n.data.replace(/\s+/g, " ")));
    if (n.nodeType !== Node.ELEMENT_NODE) return "";
    const e = n, tag = e.tagName.toUpperCase();
    if (SKIP.has(tag) || !shown(e)) return "";
    const kids = () => Array.from(e.childNodes, (c) => inline(c, depth + 1)).join("");
    switch (tag) {
      case "BR": return "\n";
      case "IMG": {
        const alt = (e.alt || "").trim(), src = abs(e.currentSrc || e.src);
        return alt || src ? budget("![" + esc(alt) + "](" + src + ")") : "";
      }
      case "A": {
        const t = kids().trim(), href = e.getAttribute("href");
        if (!t) return "";
        if (!href || /^\s*javascript:/i.test(href)) return t;
        return "[" + t + "](" + budget(abs(href)) + ")";
      }
      case "STRONG": case "B": { const t = kids().trim(); return t ? "**" + t + "**" : ""; }
      case "EM": case "I": { const t = kids().trim(); return t ? "*" + t + "*" : ""; }
      case "CODE": case "KBD": case "SAMP": { const t = e.textContent.replace(/\s+/g, " ").trim(); return t ? budget("`" + t + "`") : ""; }
      case "INPUT": {
        const t = (e.getAttribute("type") || "text").toLowerCase();
        if (["submit", "button", "reset"].includes(t) && e.value) return budget("[" + esc(e.value) + "]");
        return "";
      }
    }
    return INLINE.has(tag) ? kids() : block(e, depth);
  }

  function blocks(e, depth) {
    let s = "", run = "";
    const flush = () => { const t = run.replace(/[ \t]+/g, " ").replace(/ *\n */g, "\n").trim(); if (t) s += t + "\n\n"; run = ""; };
    for (const c of e.childNodes) {
      if (out > max) break;
      if (c.nodeType === Node.ELEMENT_NODE && !INLINE.has(c.tagName.toUpperCase()) && !SKIP.has(c.tagName.toUpperCase())) {
        flush();
        s += block(c, depth + 1);
      } else run += inline(c, depth + 1);
    }
    flush();
    return s;
  }

  function list(e, depth, ordered) {
    let s = "", i = 1;
    for (const li of e.children) {
      if (li.tagName !== "LI" || !shown(li)) continue;
      const body = blocks(li, depth + 1).trim().replace(/\n\n+/g, "\n").split("\n");
      const mark = ordered ? (i++) + ". " : "- ";
      s += mark + body[0] + "\n" + body.slice(1).map((l) => "   " + l).join("\n") + (body.length > 1 ? "\n" : "");
    }
    return s ? s.replace(/\n+$/, "") + "\n\n" : "";
  }

  function table(e, depth) {
    const rows = [];
    for (const tr of e.querySelectorAll("tr")) {
      if (tr.closest("table") !== e || !shown(tr)) continue;
      rows.push(Array.from(tr.children, (c) => blocks(c, depth + 1).replace(/\s+/g, " ").trim().replace(/\|/g, "\\|")));
      if (rows.length >= 500) break;
    }
    if (!rows.length) return "";
    const w = Math.max(...rows.map((r) => r.length));
    const line = (r) => "| " + Array.from({ length: w }, (_, i) => r[i] || "").join(" | ") + " |";
    return [line(rows[0]), "|" + " --- |".repeat(w), ...rows.slice(1).map(line)].join("\n") + "\n\n";
  }

  function block(e, depth) {
    if (depth > 200 || out > max) return "";
    const tag = e.tagName.toUpperCase();
    if (SKIP.has(tag) || !shown(e)) return "";
    if (dropChrome && (CHROME.has(tag) || ["banner", "navigation", "contentinfo", "complementary"].includes(e.getAttribute("role")))) return "";
    switch (tag) {
      case "H1": case "H2": case "H3": case "H4": case "H5": case "H6": {
        const t = blocks(e, depth).replace(/\s+/g, " ").trim();
        return t ? "#".repeat(+tag[1]) + " " + t + "\n\n" : "";
      }
      case "UL": case "MENU": return list(e, depth, false);
      case "OL": return list(e, depth, true);
      case "PRE": { const t = e.textContent.replace(/\n+$/, ""); return t.trim() ? "```\n" + budget(t) + "\n```\n\n" : ""; }
      case "BLOCKQUOTE": { const t = blocks(e, depth).trim(); return t ? t.split("\n").map((l) => "> " + l).join("\n") + "\n\n" : ""; }
      case "HR": return "---\n\n";
      case "TABLE": return table(e, depth);
      case "SELECT": case "TEXTAREA": case "OPTION": return "";
    }
    return blocks(e, depth);
  }

  let md = "";
  const title = (document.title || "").trim();
  if (title && !(root.querySelector("h1") && root.querySelector("h1").innerText.trim() === title)) md += "# " + esc(title) + "\n\n";
  md += block(root, 0);
  md = md.replace(/\n{3,}/g, "\n\n").trim() + "\n";
  return { text: md.slice(0, max), length: md.length };
})
