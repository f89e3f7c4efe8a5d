// The Shelf tab: what is indexed, skipped and stale; index, reindex and forget with progress.
import { $, api, el, state, visible } from "./dom.js";

const POLL_MS = 250;

export function showView(view) {
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

export async function loadShelf() {
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

export async function startJob(body) {
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

export function trackJob(job, poll) {
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
