// docshelf's page: search as you type, read the cited place, see a PDF page, look after the shelf.
// Its parts are modules of their own (dom, search, reader, shelf); this one wires them to the page.
import { $, FILTERS, api, countFilters, ensureOption, state, visible, writeUrl } from "./dom.js";
import { closeReader, copyCitation, openHit, openPassage } from "./reader.js";
import { runSearch, scheduleSearch, select, showError, showModel } from "./search.js";
import { showView, startJob } from "./shelf.js";

function applyUrl() {
  const p = new URLSearchParams(location.search);
  $("q").value = p.get("q") || "";
  for (const [key, id] of Object.entries(FILTERS)) {
    if ($(id).tagName === "SELECT") ensureOption($(id), p.get(key) || "");
    $(id).value = p.get(key) || "";
  }
  countFilters();
  if (p.get("view") === "shelf") {
    showView("shelf");
    return;
  }
  showView("search");
  const open = p.get("open");
  runSearch().then(() => {
    if (open) {
      const i = state.hits.findIndex((h) => h.chunk_id === open);
      openPassage(open, i >= 0 ? state.hits[i] : null, false);
      if (i >= 0) select(i, false);
    } else closeReader(false);
  });
}


// ----- wiring -----
function typing(target) {
  return target instanceof HTMLElement && (target.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(target.tagName));
}

function wire() {
  $("q").addEventListener("input", () => {
    if (state.view !== "search") showView("search");
    scheduleSearch();
  });
  $("search-form").addEventListener("submit", (e) => {
    e.preventDefault();
    runSearch().then(() => writeUrl(true));
  });
  $("q").addEventListener("keydown", (e) => {
    if (e.key === "ArrowDown" && state.hits.length) {
      e.preventDefault();
      select(state.selected >= 0 ? state.selected : 0);
    }
  });
  for (const id of Object.values(FILTERS)) {
    $(id).addEventListener($(id).tagName === "SELECT" ? "change" : "input", () => {
      countFilters();
      scheduleSearch();
    });
  }
  $("hits").addEventListener("click", (e) => {
    const a = e.target instanceof Element ? e.target.closest("a.hit-link") : null;
    if (!a || e.ctrlKey || e.metaKey || e.shiftKey || e.button !== 0) return;
    e.preventDefault();
    openHit(Number(a.dataset.index), true);
  });
  $("hits").addEventListener("keydown", (e) => {
    const keys = { ArrowDown: 1, ArrowUp: -1, Home: -1e9, End: 1e9 };
    if (e.key in keys) {
      e.preventDefault();
      if (e.key === "ArrowUp" && state.selected <= 0) $("q").focus();
      else select(state.selected + keys[e.key]);
    }
  });
  $("hits").addEventListener("focusin", (e) => {
    const a = e.target instanceof Element ? e.target.closest("a.hit-link") : null;
    if (a) select(Number(a.dataset.index), false);
  });
  document.addEventListener("keydown", (e) => {
    if (e.key === "/" && !typing(e.target) && !e.ctrlKey && !e.metaKey && !e.altKey) {
      e.preventDefault();
      if (state.view !== "search") showView("search");
      $("q").focus();
      $("q").select();
    } else if (e.key === "Escape" && !$("reader").hidden) {
      e.preventDefault();
      closeReader(true);
    } else if (e.key === "Escape" && document.activeElement && document.activeElement.closest("#hits")) {
      $("q").focus();
    }
  });
  $("back").addEventListener("click", () => closeReader(true));
  $("copy").addEventListener("click", copyCitation);
  $("more-before").addEventListener("click", () => {
    const r = state.reader;
    const first = $("doc-text").querySelector(".line");
    openPassage(r.chunk_id, state.readerHit, null, r.before + 1, r.after, first ? first.dataset.line : null);
  });
  $("more-after").addEventListener("click", () => {
    const r = state.reader;
    const keep = $("doc-text").querySelector(".line.cited");
    openPassage(r.chunk_id, state.readerHit, null, r.before, r.after + 1, keep ? keep.dataset.line : null);
  });
  $("nav-shelf").addEventListener("click", (e) => {
    e.preventDefault();
    showView("shelf");
    writeUrl(true);
  });
  $("nav-search").addEventListener("click", (e) => {
    e.preventDefault();
    showView("search");
    writeUrl(true);
    $("q").focus();
  });
  $("index-form").addEventListener("submit", (e) => {
    e.preventDefault();
    startJob({ action: "index", target: $("index-target").value, collection: $("index-collection").value });
  });
  $("forget-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const target = $("forget-target").value.trim();
    if (target && confirm(`Forget ${visible(target)}? It leaves the index; the files on disk are not touched.`)) {
      startJob({ action: "forget", target });
    }
  });
  $("reindex-all").addEventListener("click", () => startJob({ action: "reindex" }));
  $("job-cancel").addEventListener("click", async () => {
    if (!state.job) return;
    $("job-cancel").disabled = true;
    try {
      await api(`/api/jobs/${encodeURIComponent(state.job.id)}/cancel`, { body: {} });
    } catch (e) {
      $("job-result").textContent = e.message;
    }
  });
  $("logout").addEventListener("submit", async (e) => {
    e.preventDefault();
    await fetch("/logout", { method: "POST", headers: { "X-Docshelf-Csrf": state.csrf }, credentials: "same-origin" });
    location.assign("/login");
  });
  window.addEventListener("popstate", applyUrl);
}

async function loadFacets() {
  try {
    const f = await api("/api/facets");
    for (const c of f.collections) ensureOption($("f-collection"), c);
    for (const t of f.file_types) ensureOption($("f-types"), t);
  } catch {
    // no index yet: the filters stay empty, the search says what to run
  }
}

async function start() {
  wire();
  // the filters are open on a wide screen and a tap away on a phone
  if (window.matchMedia("(min-width: 700px)").matches) $("filters").open = true;
  try {
    const s = await api("/api/session");
    state.csrf = s.csrf;
    state.readOnly = s.read_only;
    state.modelState = s.model_state;
    showModel();
    document.body.dataset.readOnly = String(s.read_only);
  } catch (e) {
    showError(e.message);
    return;
  }
  await loadFacets();
  applyUrl();
  if (!location.search) $("q").focus();
  document.body.dataset.ready = "true";
}

start();
