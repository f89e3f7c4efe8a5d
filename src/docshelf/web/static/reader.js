// Reading a passage: the document's lines around it, marked; a PDF hit's page drawn beside them.
import { $, api, el, prose, safeUrl, state, visible, writeUrl } from "./dom.js";
import { select } from "./search.js";

export function openHit(i, push) {
  const hit = state.hits[i];
  if (!hit) return;
  select(i, false);
  openPassage(hit.chunk_id, hit, push);
}

// the passage asked for last is the one shown: a slow answer (a long PDF's first read takes
// seconds) is dropped when another was asked for meanwhile, and until it comes the reader says so
export async function openPassage(chunkId, hit, push, before = 1, after = 1, keep = null) {
  document.body.classList.add("reading");
  const reader = $("reader");
  reader.hidden = false;
  state.readerHit = hit;
  if (state.reading) state.reading.abort();
  const asked = (state.reading = new AbortController());
  reader.setAttribute("aria-busy", "true");
  if (hit) {
    $("doc-title").textContent = visible(hit.title || hit.path);
    $("doc-title").title = visible(hit.path);
    $("doc-cite").textContent = visible(hit.citation);
  }
  try {
    const url = `/api/read?chunk=${encodeURIComponent(chunkId)}&before=${before}&after=${after}`;
    const data = await api(url, { signal: asked.signal });
    if (asked !== state.reading) return;
    state.reader = data;
    if (push !== null) writeUrl(push);
    renderReader(data, hit, keep);
    if (data.pdf && data.page) loadPage(data.doc.id, data.page, data.chunk_id);
    else $("pdf").hidden = true;
  } catch (e) {
    if (asked !== state.reading) return;
    $("reader-note").hidden = false;
    $("reader-note").textContent = e.message;
  } finally {
    if (asked === state.reading) {
      state.reading = null;
      reader.removeAttribute("aria-busy");
    }
  }
}

export function closeReader(push) {
  if ($("reader").hidden) return;
  if (state.reading) state.reading.abort();
  state.reading = null;
  $("reader").removeAttribute("aria-busy");
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
  const asked = (state.pageAsked = {}); // the page turned to last is the one shown
  try {
    const data = await api(`/api/page?doc=${encodeURIComponent(docId)}&page=${page}&chunk=${encodeURIComponent(chunkId || "")}&w=${width}`);
    if (asked !== state.pageAsked || !state.reader || state.reader.doc.id !== docId) return;
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
    if (asked !== state.pageAsked) return;
    $("page-label").textContent = "";
    $("page-note").textContent = e.message;
  }
}

export async function copyCitation() {
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
