// docshelf's page: search as you type, read the cited place, see a PDF page, look after the shelf.
// Document text and file names are data: every element is built with createElement and its text
// set with textContent (never innerHTML), links are made only from http(s) URLs, and the
// Content-Security-Policy allows no inline script, so markup inside a document stays text.
"use strict";
(() => {
  const DEBOUNCE_MS = 90;
  const POLL_MS = 250;
  const $ = (id) => document.getElementById(id);
  const state = {
    csrf: "", readOnly: true, modelState: "", hits: [], selected: -1, seq: 0, controller: null,
    query: "", reader: null, readerHit: null, view: "search", pageUrl: "", job: null,
  };

  // ----- text that is data -----
  // bidirectional controls in a name can make "gpj.exe" read as "exe.jpg": show them, do not obey them
  const BIDI = /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g;
  // in document text the marks (LRM, RLM, ALM) stay: right-to-left prose needs them; the
  // embeddings, overrides and isolates that can reverse what follows are shown
  const REORDERING = /[\u202A-\u202E\u2066-\u2069]/g;
  const code = (c) => `⟨U+${c.codePointAt(0).toString(16).toUpperCase().padStart(4, "0")}⟩`;
  const visible = (s) => String(s ?? "").replace(BIDI, code);
  const prose = (s) => String(s ?? "").replace(REORDERING, code);

  function el(tag, cls, text) {
    const node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = text;
    return node;
  }

  function safeUrl(url) {
    try {
      const u = new URL(url);
      return u.protocol === "http:" || u.protocol === "https:" ? u.href : null;
    } catch {
      return null;
    }
  }

  // ----- the server -----
  async function api(path, options = {}) {
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
  const FILTERS = { mode: "f-mode", collection: "f-collection", types: "f-types", glob: "f-glob", tags: "f-tags" };

  function urlFor(extra) {
    const p = new URLSearchParams();
    const q = $("q").value.trim();
    if (q) p.set("q", q);
    for (const [key, id] of Object.entries(FILTERS)) if ($(id).value.trim()) p.set(key, $(id).value.trim());
    for (const [key, value] of Object.entries(extra || {})) if (value) p.set(key, value);
    const s = p.toString();
    return "/" + (s ? "?" + s : "");
  }

  function writeUrl(push) {
    const extra = state.view === "shelf" ? { view: "shelf" } : { open: state.reader ? state.reader.chunk_id : "" };
    const url = urlFor(extra);
    if (url === location.pathname + location.search) return;
    history[push ? "pushState" : "replaceState"](null, "", url);
  }

  function ensureOption(select, value) {
    if (value && ![...select.options].some((o) => o.value === value)) select.append(new Option(value, value));
  }

  function countFilters() {
    const n = Object.values(FILTERS).filter((id) => $(id).value.trim()).length;
    $("filter-count").textContent = n ? `(${n} set)` : "";
    if (n) $("filters").open = true;
  }

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

  // ----- search -----
  let timer = 0;
  function scheduleSearch() {
    clearTimeout(timer);
    timer = setTimeout(() => runSearch().then(() => writeUrl(false)), DEBOUNCE_MS);
  }

  async function runSearch() {
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

  function showError(message) {
    $("summary").textContent = "";
    $("hits").replaceChildren();
    $("note").hidden = false;
    $("note").className = "note error";
    $("note").textContent = message;
  }

  function snippetNode(snippet) {
    const p = el("p", "snippet");
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
    li.append(a);
    return li;
  }

  function renderHits(data) {
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

  function hitLinks() {
    return [...$("hits").querySelectorAll("a.hit-link")];
  }

  function select(i, focus = true) {
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

  function showModel() {
    const s = state.modelState;
    const said = { loading: "embedding model: loading (keyword-only hits meanwhile)", failed: "embedding model: failed to load (keyword-only hits; see the Shelf tab)" };
    $("foot-model").textContent = said[s] || "";
  }

  // ----- reading a passage -----
  function openHit(i, push) {
    const hit = state.hits[i];
    if (!hit) return;
    select(i, false);
    openPassage(hit.chunk_id, hit, push);
  }

  async function openPassage(chunkId, hit, push, before = 1, after = 1, keep = null) {
    document.body.classList.add("reading");
    $("reader").hidden = false;
    state.readerHit = hit;
    try {
      const data = await api(`/api/read?chunk=${encodeURIComponent(chunkId)}&before=${before}&after=${after}`);
      state.reader = data;
      if (push !== null) writeUrl(push);
      renderReader(data, hit, keep);
      if (data.pdf && data.page) loadPage(data.doc.id, data.page, data.chunk_id);
      else $("pdf").hidden = true;
    } catch (e) {
      $("reader-note").hidden = false;
      $("reader-note").textContent = e.message;
    }
  }

  function closeReader(push) {
    if ($("reader").hidden) return;
    $("reader").hidden = true;
    document.body.classList.remove("reading");
    state.reader = null;
    if (push !== null) writeUrl(push);
    if (state.selected >= 0) select(state.selected);
  }

  const HEADING_MARKS = /^[#=\-*\s]+|[#=\-*\s]+$/g;

  function lineStarts(text) {
    const starts = [0];
    const re = /\r\n|\r|\n/g;
    let m;
    while ((m = re.exec(text))) starts.push(m.index + m[0].length);
    return starts;
  }

  // the text as numbered lines; ranges [start, end, class] become <mark> pieces within them
  function renderLines(text, firstLine, ranges, cited, headings) {
    const starts = lineStarts(text);
    const out = document.createDocumentFragment();
    for (let n = 0; n < starts.length; n++) {
      const s = starts[n];
      let e = n + 1 < starts.length ? starts[n + 1] : text.length;
      const body = text.slice(s, e).replace(/\r?\n$|\r$/, "");
      e = s + body.length;
      const row = el("div", "line");
      row.dataset.line = String(firstLine + n);
      if (s < cited[1] && (e > cited[0] || (e === s && s >= cited[0]))) row.classList.add("cited");
      if (body.trim() && headings.has(body.replace(HEADING_MARKS, "").trim())) row.classList.add("h");
      const cell = el("span", "t");
      const cuts = new Set([s, e]);
      for (const [a, b] of ranges) {
        if (a > s && a < e) cuts.add(a);
        if (b > s && b < e) cuts.add(b);
      }
      const points = [...cuts].sort((x, y) => x - y);
      for (let k = 0; k + 1 < points.length; k++) {
        const [a, b] = [points[k], points[k + 1]];
        const classes = ranges.filter(([x, y]) => x <= a && y >= b).map((r) => r[2]);
        const piece = prose(text.slice(a, b));
        cell.append(classes.length ? el("mark", [...new Set(classes)].join(" "), piece) : piece);
      }
      row.append(el("span", "n", String(firstLine + n)), cell);
      out.append(row);
    }
    return out;
  }

  function renderReader(data, hit, keep) {
    const doc = data.doc;
    $("doc-title").textContent = visible(doc.title || doc.path);
    $("doc-title").title = visible(doc.path);
    $("doc-cite").textContent = visible(data.citation);
    const target = data.passages.find((p) => p.target);
    $("reader-heading").textContent = target && target.heading.length ? visible(target.heading.join(" › ")) : "";
    const notes = [data.note, data.source === "index" ? "shown from the index (the file could not be read as indexed)" : null];
    const link = doc.source_url ? safeUrl(doc.source_url) : null;
    $("reader-note").hidden = !notes.some(Boolean);
    $("reader-note").textContent = notes.filter(Boolean).join("; ");
    const ranges = [[target.start, target.end, "passage"]];
    if (hit && hit.chunk_id === data.chunk_id) {
      for (const [a, b] of hit.marks) ranges.push([target.start + a, Math.min(target.end, target.start + b), "hit"]);
    }
    const headings = new Set(data.passages.flatMap((p) => p.heading).map((h) => h.trim()));
    const box = $("doc-text");
    box.replaceChildren(renderLines(data.text, data.first_line, ranges, [target.start, target.end], headings));
    box.dataset.chunk = data.chunk_id;
    if (link) {
      const a = el("a", "source", "source: " + visible(link));
      a.href = link;
      a.rel = "noopener noreferrer";
      a.target = "_blank";
      box.prepend(a);
    }
    $("more-before").hidden = !data.more_before;
    $("more-after").hidden = !data.more_after;
    const row = keep !== null ? box.querySelector(`.line[data-line="${keep}"]`) : box.querySelector(".line.cited");
    if (row) row.scrollIntoView({ block: keep !== null ? "start" : "center" });
  }

  async function loadPage(docId, page, chunkId) {
    const fig = $("pdf");
    fig.hidden = false;
    const width = Math.max(400, Math.min(2000, Math.round((fig.clientWidth || 800) * (window.devicePixelRatio || 1))));
    $("page-label").textContent = `page ${page} …`;
    try {
      const data = await api(`/api/page?doc=${encodeURIComponent(docId)}&page=${page}&chunk=${encodeURIComponent(chunkId || "")}&w=${width}`);
      if (!state.reader || state.reader.doc.id !== docId) return;
      const bytes = Uint8Array.from(atob(data.png), (c) => c.charCodeAt(0));
      if (state.pageUrl) URL.revokeObjectURL(state.pageUrl);
      state.pageUrl = URL.createObjectURL(new Blob([bytes], { type: "image/png" }));
      const img = $("page-img");
      img.width = data.width;
      img.height = data.height;
      img.alt = `Page ${data.page} of ${visible(data.path)}`;
      img.src = state.pageUrl;
      const boxes = $("page-boxes");
      boxes.replaceChildren(...data.boxes.map(([l, t, r, b]) => {
        const d = el("div", "box");
        d.style.left = `${l * 100}%`;
        d.style.top = `${t * 100}%`;
        d.style.width = `${(r - l) * 100}%`;
        d.style.height = `${(b - t) * 100}%`;
        return d;
      }));
      fig.dataset.page = String(data.page);
      $("page-label").textContent = `page ${data.page} of ${data.pages}`;
      $("page-note").textContent = data.note || "";
      $("page-prev").disabled = data.page <= 1;
      $("page-next").disabled = data.page >= data.pages;
      $("page-prev").onclick = () => loadPage(docId, data.page - 1, chunkId);
      $("page-next").onclick = () => loadPage(docId, data.page + 1, chunkId);
    } catch (e) {
      $("page-label").textContent = "";
      $("page-note").textContent = e.message;
    }
  }

  async function copyCitation() {
    if (!state.reader) return;
    const text = state.reader.citation;
    try {
      await navigator.clipboard.writeText(text);
    } catch {
      const area = el("textarea", "offscreen");
      area.value = text;
      document.body.append(area);
      area.select();
      document.execCommand("copy");
      area.remove();
    }
    $("copy").textContent = "Copied";
    $("copy").dataset.copied = text;
    setTimeout(() => ($("copy").textContent = "Copy citation"), 1500);
  }

  // ----- the shelf -----
  function showView(view) {
    state.view = view;
    $("shelf").hidden = view !== "shelf";
    $("results").hidden = view === "shelf";
    $("filters").hidden = view === "shelf";
    if (view === "shelf") {
      $("reader").hidden = true;
      document.body.classList.remove("reading");
      loadShelf();
    }
    $("nav-search").setAttribute("aria-current", view === "search" ? "page" : "false");
    $("nav-shelf").setAttribute("aria-current", view === "shelf" ? "page" : "false");
  }

  const when = (iso) => (iso ? new Date(iso).toLocaleString() : "never");
  const size = (n) => (n > 1e9 ? `${(n / 1e9).toFixed(1)} GB` : n > 1e6 ? `${(n / 1e6).toFixed(1)} MB` : `${Math.round(n / 1e3)} kB`);

  async function loadShelf() {
    try {
      renderShelf(await api("/api/status"));
    } catch (e) {
      $("shelf-summary").textContent = e.message;
    }
    $("writes").hidden = state.readOnly;
    if (!state.readOnly) {
      const current = await api("/api/jobs/current").catch(() => ({ job: null }));
      if (current.job) trackJob(current.job, current.job.state === "running");
    }
  }

  function renderShelf(s) {
    const model = `${s.model || "no model recorded"} (${s.model_state}${s.model_error ? ": " + s.model_error : ""})`;
    $("shelf-summary").textContent = s.empty ? s.message : `${s.documents} documents, ${s.chunks} passages, ${size(s.size_bytes)} · model ${model} · ${s.store} in ${s.data_dir}`;
    $("allowed").textContent = s.allowed.length ? "May index inside: " + s.allowed.map(visible).join(", ") : "Nothing indexed yet: start the server with --allow-ingest DIR to index from here.";
    const rows = s.collections.map((c) => {
      const tr = el("tr");
      const roots = el("td", "paths-cell");
      c.roots.forEach((r) => roots.append(el("div", null, visible(r))));
      const b = c.last_build;
      const commit = b && b.git_commit ? b.git_commit.slice(0, 10) + (b.git_dirty ? " (dirty)" : "") : "";
      tr.append(el("td", null, visible(c.name)), el("td", "num", String(c.documents)), el("td", "num", String(c.chunks)), roots,
        el("td", null, b ? when(b.finished_at) : "never"), el("td", "mono", commit));
      const act = el("td");
      if (!state.readOnly) {
        const btn = el("button", "ghost", "Reindex");
        btn.type = "button";
        btn.addEventListener("click", () => startJob({ action: "reindex", collection: c.name }));
        act.append(btn);
      }
      tr.append(act);
      return tr;
    });
    $("collections").tBodies[0].replaceChildren(...rows);
    $("skipped-count").textContent = s.skipped_total ? `(${s.skipped_total})` : "(none)";
    $("skipped").replaceChildren(...s.skipped.map((g) => {
      const d = el("details");
      d.append(el("summary", null, `${visible(g.kind)} (${g.count})`));
      const ul = el("ul", "paths");
      g.files.forEach((f) => ul.append(el("li", null, `${visible(f.collection)}: ${visible(f.path)} — ${visible(f.reason)}`)));
      d.append(ul);
      return d;
    }));
    $("stale-count").textContent = s.stale_documents || s.new_files ? `(${s.stale_documents} changed or gone, ${s.new_files} new)` : "(none)";
    $("stale").replaceChildren(...s.stale.map((f) => el("li", null, `${visible(f.collection)}: ${visible(f.path)} — ${visible(f.reason)}`)));
  }

  async function startJob(body) {
    // the last job's outcome goes: what the page shows from now on is this job's
    $("job").hidden = false;
    $("job").dataset.state = "starting";
    $("job-label").textContent = `${body.action} ${visible(body.target || body.collection || "")}: starting`;
    $("job-result").textContent = "";
    $("job-skipped").replaceChildren();
    try {
      trackJob(await api("/api/jobs", { body }), true);
    } catch (e) {
      $("job").dataset.state = "failed";
      $("job-label").textContent = e.message;
      $("job-cancel").hidden = true;
      $("job-bar").hidden = true;
    }
  }

  function trackJob(job, poll) {
    state.job = job;
    const box = $("job");
    box.hidden = false;
    box.dataset.state = job.state;
    const what = job.action === "reindex" ? job.collection || "every collection" : job.target;
    const counts = job.total ? `${job.done}/${job.total} files` : "";
    $("job-label").textContent = `${job.action} ${visible(what)}: ${job.state === "running" ? (job.cancelling ? "cancelling" : job.phase) : job.state} ${counts}`.trim();
    const bar = $("job-bar");
    bar.hidden = false;
    if (job.total) {
      bar.max = job.total;
      bar.value = job.done;
    } else if (job.state === "running") bar.removeAttribute("value");
    else bar.value = bar.max;
    $("job-cancel").hidden = job.state !== "running";
    $("job-cancel").disabled = job.cancelling;
    const r = job.report;
    let result = job.message || "";
    if (job.state === "done" && r) {
      result = "removed" in r && !("added" in r)
        ? `forgot ${r.removed} document${r.removed === 1 ? "" : "s"} of ${visible(r.collection)}`
        : `${visible(r.collection || "")}: ${r.added} added, ${r.updated} updated, ${r.removed} removed, ${r.unchanged} unchanged, ${r.skipped_total} skipped in ${job.seconds} s`;
      if (r.notes && r.notes.length) result += " · " + r.notes.map(visible).join(" · ");
    }
    $("job-result").textContent = result;
    $("job-skipped").replaceChildren(...(r && r.skipped ? r.skipped : []).map((s) => el("li", null, `${visible(s.path)} — ${visible(s.reason)}`)));
    if (job.state === "running" && poll) {
      setTimeout(async () => {
        try {
          trackJob(await api(`/api/jobs/${encodeURIComponent(job.id)}`), true);
        } catch (e) {
          $("job-result").textContent = e.message;
        }
      }, POLL_MS);
    } else if (job.state !== "running" && poll) {
      api("/api/status").then(renderShelf).catch(() => {});
    }
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
})();
