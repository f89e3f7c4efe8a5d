// What every part of the page shares: its state, text shown as data, the server, the URL.
// Document text and file names are data: every element is built with createElement and its text
// set with textContent (never innerHTML), and links are made only from http(s) URLs.

export const $ = (id) => document.getElementById(id);
export const state = {
  csrf: "", readOnly: true, modelState: "", hits: [], selected: -1, seq: 0, controller: null,
  query: "", reader: null, readerHit: null, reading: null, pageAsked: null, view: "search", pageUrl: "", job: null,
};

// ----- text that is data -----
// bidirectional controls in a name can make "gpj.exe" read as "exe.jpg": show them, do not obey them
const BIDI = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;
// in document text the marks (LRM, RLM, ALM) stay: right-to-left prose needs them; the
// embeddings, overrides and isolates that can reverse what follows are shown
const REORDERING = /[\u202A-\u202E\u2066-\u2069]/g;
const code = (c) => `⟨U+${c.codePointAt(0).toString(16).toUpperCase().padStart(4, "0")}⟩`;
export const visible = (s) => String(s ?? "").replace(BIDI, code);
export const prose = (s) => String(s ?? "").replace(REORDERING, code);

export function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = text;
  return node;
}

export function safeUrl(url) {
  try {
    const u = new URL(url);
    return u.protocol === "http:" || u.protocol === "https:" ? u.href : null;
  } catch {
    return null;
  }
}

// ----- the server -----
export async function api(path, options = {}) {
  const init = { headers: { Accept: "application/json" }, credentials: "same-origin", cache: "no-store", signal: options.signal };
  if (options.body !== undefined) {
    init.method = "POST";
    init.headers["Content-Type"] = "application/json";
    init.headers["X-Docshelf-Csrf"] = state.csrf;
    init.body = JSON.stringify(options.body);
  }
  const res = await fetch(path, init);
  if (res.status === 401) {
    location.assign("/login");
    throw new Error("log in first");
  }
  let data = null;
  try {
    data = await res.json();
  } catch {
    throw new Error(`the server answered ${res.status} without JSON`);
  }
  if (!res.ok) throw new Error(data && data.error ? data.error : `the server answered ${res.status}`);
  return data;
}

// ----- the URL holds the query, the filters, the open passage and the view -----
export const FILTERS = { mode: "f-mode", collection: "f-collection", types: "f-types", glob: "f-glob", tags: "f-tags" };

export function urlFor(extra) {
  const p = new URLSearchParams();
  const q = $("q").value.trim();
  if (q) p.set("q", q);
  for (const [key, id] of Object.entries(FILTERS)) if ($(id).value.trim()) p.set(key, $(id).value.trim());
  for (const [key, value] of Object.entries(extra || {})) if (value) p.set(key, value);
  const s = p.toString();
  return "/" + (s ? "?" + s : "");
}

export function writeUrl(push) {
  const extra = state.view === "shelf" ? { view: "shelf" } : { open: state.reader ? state.reader.chunk_id : "" };
  const url = urlFor(extra);
  if (url === location.pathname + location.search) return;
  history[push ? "pushState" : "replaceState"](null, "", url);
}

export function ensureOption(select, value) {
  if (value && ![...select.options].some((o) => o.value === value)) select.append(new Option(value, value));
}

export function countFilters() {
  const n = Object.values(FILTERS).filter((id) => $(id).value.trim()).length;
  $("filter-count").textContent = n ? `(${n} set)` : "";
  if (n) $("filters").open = true;
}
