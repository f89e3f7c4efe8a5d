// Search as you type: debounced requests, the newest answer wins, hits walked by the keyboard.
import { $, FILTERS, api, el, prose, state, urlFor, visible, writeUrl } from "./dom.js";

const DEBOUNCE_MS = 90;

let timer = 0;
export function scheduleSearch() {
  clearTimeout(timer);
  timer = setTimeout(() => runSearch().then(() => writeUrl(false)), DEBOUNCE_MS);
}

export async function runSearch() {
  clearTimeout(timer);
  const q = $("q").value.trim();
  if (state.controller) state.controller.abort();
  const seq = ++state.seq;
  if (!q) {
    renderHits(null);
    return;
  }
  const params = new URLSearchParams({ q });
  for (const [key, id] of Object.entries(FILTERS)) if ($(id).value.trim()) params.set(key, $(id).value.trim());
  const controller = new AbortController();
  state.controller = controller;
  document.body.classList.add("busy");
  try {
    const data = await api("/api/search?" + params, { signal: controller.signal });
    if (seq === state.seq) renderHits(data);
  } catch (e) {
    if (e.name !== "AbortError" && seq === state.seq) showError(e.message);
  } finally {
    if (seq === state.seq) document.body.classList.remove("busy");
  }
}

export function showError(message) {
  $("summary").textContent = "";
  $("hits").replaceChildren();
  $("note").hidden = false;
  $("note").className = "note error";
  $("note").textContent = message;
}

function snippetNode(snippet) {
  const p = el("p", snippet.lines ? "snippet code" : "snippet");
  if (snippet.cut_before) p.append("… ");
  for (const [piece, marked] of snippet.parts) p.append(marked ? el("mark", null, prose(piece)) : prose(piece));
  if (snippet.cut_after) p.append(" …");
  return p;
}

function where(hit) {
  if (hit.page) return hit.page_label && hit.page_label !== String(hit.page) ? `page ${hit.page} (${hit.page_label})` : `page ${hit.page}`;
  return `lines ${hit.lines[0]}-${hit.lines[1]}`;
}

function hitNode(hit, i, many) {
  const li = el("li", "hit");
  const a = el("a", "hit-link");
  a.href = urlFor({ open: hit.chunk_id });
  a.dataset.index = String(i);
  a.dataset.chunk = hit.chunk_id;
  const top = el("div", "hit-top");
  const path = el("bdi", "path", visible(hit.path));
  top.append(path, el("span", "where", where(hit)));
  if (/\.pdf$/i.test(hit.path)) top.append(el("span", "badge", "PDF"));
  if (many) top.append(el("span", "badge", visible(hit.collection)));
  const pct = Math.round(hit.confidence * 100);
  const conf = el("span", "conf", `${pct}%`);
  conf.title = "confidence that this passage answers the query";
  conf.dataset.level = pct >= 50 ? "high" : pct >= 20 ? "mid" : "low";
  top.append(conf);
  a.append(top);
  if (hit.heading.length) a.append(el("div", "heading", visible(hit.heading.join(" › "))));
  a.append(snippetNode(hit.snippet));
  a.append(el("div", "matched", hit.matched.length ? "matched: " + hit.matched.join(", ") : "found by meaning only"));
  if (hit.also_in && hit.also_in.length) {
    // the same passage, word for word, in other places: one hit, the places listed
    const shown = hit.also_in.slice(0, 3).map(visible).join(", ");
    const more = hit.also_in.length > 3 ? ` and ${hit.also_in.length - 3} more` : "";
    a.append(el("div", "also", `also in ${shown}${more}`));
  }
  li.append(a);
  return li;
}

export function renderHits(data) {
  state.hits = data ? data.hits : [];
  state.selected = -1;
  $("welcome").hidden = Boolean(data);
  $("note").hidden = !(data && data.note);
  $("note").className = "note";
  $("note").textContent = data && data.note ? data.note : "";
  if (!data) {
    $("summary").textContent = "";
    $("hits").replaceChildren();
    document.body.dataset.query = "";
    return;
  }
  const many = new Set(data.hits.map((h) => h.collection)).size > 1;
  const list = document.createDocumentFragment();
  data.hits.forEach((hit, i) => list.append(hitNode(hit, i, many)));
  $("hits").replaceChildren(list);
  const n = data.hits.length;
  const stale = data.stale_documents ? ` · ${data.stale_documents} files changed since indexing` : "";
  $("summary").textContent = n
    ? `${n} hit${n === 1 ? "" : "s"} · ${data.mode} · ${data.took_ms} ms${stale}`
    : `No hits for this query (${data.mode}). Try other words, another language, or fewer filters.`;
  document.body.dataset.query = data.query;
  // two frames: the first paints the list, the second starts after that paint
  requestAnimationFrame(() => requestAnimationFrame(() => performance.mark("docshelf:results", { detail: data.query })));
  if (state.modelState === "loading") watchModel();
}

export function hitLinks() {
  return [...$("hits").querySelectorAll("a.hit-link")];
}

export function select(i, focus = true) {
  const links = hitLinks();
  if (!links.length) return;
  i = Math.max(0, Math.min(links.length - 1, i));
  links.forEach((a, n) => {
    a.classList.toggle("selected", n === i);
    a.setAttribute("aria-current", n === i ? "true" : "false");
  });
  state.selected = i;
  if (focus) links[i].focus();
  links[i].scrollIntoView({ block: "nearest" });
}

// the model loads in the background: keyword-only hits until it is ready, then the search again
let watching = false;
async function watchModel() {
  if (watching) return;
  watching = true;
  try {
    for (let i = 0; i < 120 && state.modelState === "loading"; i++) {
      await new Promise((r) => setTimeout(r, 1000));
      const s = await api("/api/session");
      state.modelState = s.model_state;
      showModel();
    }
    if (state.modelState === "ready" && $("q").value.trim()) runSearch();
  } finally {
    watching = false;
  }
}

export function showModel() {
  const s = state.modelState;
  const said = { loading: "embedding model: loading (keyword-only hits meanwhile)", failed: "embedding model: failed to load (keyword-only hits; see the Shelf tab)" };
  $("foot-model").textContent = said[s] || "";
}
