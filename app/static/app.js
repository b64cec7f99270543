// flashjudge pages: upload forms (file picker + drag-and-drop) and live progress over SSE.
// No build step: plain browser JavaScript next to a vendored htmx.
"use strict";

function csrfToken() {
  return document.querySelector('meta[name="csrf-token"]').content;
}

async function postForm(url, data) {
  const response = await fetch(url, {
    method: "POST", body: data, headers: {"X-CSRF-Token": csrfToken(), "Accept": "application/json"},
  });
  const body = await response.json().catch(() => ({detail: response.statusText}));
  if (!response.ok) throw new Error(body.detail || response.statusText);
  return body;
}

// The server's upload limits (GET /api/submissions/limits): a too-large file is refused here,
// before its bytes are sent, with the limit in the message.
async function sizeProblem(files) {
  const limits = await (await fetch("/api/submissions/limits")).json();
  if (files.length > limits.max_files) return `${files.length} files; at most ${limits.max_files} may be submitted`;
  const big = files.find((f) => f.size > limits.max_source_bytes);
  if (big) return `${big.name} has ${big.size} bytes; a source file may have at most ${limits.max_source_bytes} bytes. Nothing was sent.`;
  return null;
}

function setupSubmit() {
  const form = document.getElementById("submit-form");
  if (!form) return;
  const input = document.getElementById("files");
  const drop = document.getElementById("drop");
  const chosen = document.getElementById("chosen");
  let dropped = [];
  const show = () => {
    const names = (dropped.length ? dropped : Array.from(input.files)).map((f) => f.name);
    chosen.replaceChildren(...names.map((n) => Object.assign(document.createElement("li"), {textContent: n})));
  };
  const language = form.querySelector("select[name=language]");
  const alarm = document.getElementById("capacity");
  const button = form.querySelector("button[type=submit]");
  const closed = button.disabled;  // past a refusing deadline: stays disabled
  const named = () => {  // "Drop hw4.c here": the chosen language's main file
    const option = language.selectedOptions[0];
    document.getElementById("drop-label").textContent = "Drop " + option.dataset.main + option.dataset.extra;
    if (alarm && alarm.getAttribute("role") === "alert") {  // a student picked what cannot be judged
      alarm.textContent = option.dataset.why ? option.dataset.why + ": choose another language." : "";
      alarm.hidden = !option.dataset.why;
      button.disabled = closed || Boolean(option.dataset.why);
    }
  };
  language.addEventListener("change", named);
  const picker = form.querySelector("select[name=assignment]");
  if (picker) picker.addEventListener("change", () => {  // its deadline and languages
    window.location = "/submit?assignment=" + encodeURIComponent(picker.value);
  });
  input.addEventListener("change", () => { dropped = []; show(); });
  drop.addEventListener("dragover", (e) => { e.preventDefault(); drop.classList.add("over"); });
  drop.addEventListener("dragleave", () => drop.classList.remove("over"));
  drop.addEventListener("drop", (e) => {
    e.preventDefault(); drop.classList.remove("over");
    dropped = Array.from(e.dataTransfer.files); show();
  });
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const data = new FormData();
    data.append("language", form.language.value);
    if (form.assignment && form.assignment.value) data.append("assignment", form.assignment.value);
    const files = dropped.length ? dropped : Array.from(input.files);
    for (const f of files) data.append("files", f, f.name);
    if (!files.length) {  // the same words as the server's refusal, without a round trip
      const main = language.selectedOptions[0].dataset.main;
      document.getElementById("submit-error").textContent = `choose your ${main} (or drop it here)`;
      return;
    }
    try {
      const problem = await sizeProblem(files);
      if (problem) throw new Error(problem);
      const body = await postForm("/api/submissions", data);
      window.location = "/submissions/" + body.id;
    } catch (err) {
      document.getElementById("submit-error").textContent = err.message;
    }
  });
}

function setupLive() {
  const box = document.getElementById("submission");
  if (!box || box.dataset.live !== "yes") return;
  const id = box.dataset.id;
  const source = new EventSource("/api/submissions/" + id + "/events");
  const refresh = () => htmx.ajax("GET", "/partials/submissions/" + id, {target: "#submission", swap: "innerHTML"});
  source.addEventListener("progress", refresh);
  source.addEventListener("done", () => { source.close(); refresh(); });
}

function setupCustom() {
  const form = document.getElementById("custom-form");
  if (!form) return;
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const status = document.getElementById("custom-status");
    document.getElementById("custom-error").textContent = "";
    status.textContent = "uploading...";
    try {
      const run = await postForm("/api/custom-runs", new FormData(form));
      window.location = "/custom/" + run.id;  // its page follows it until it is done
    } catch (err) {
      status.textContent = "";
      document.getElementById("custom-error").textContent = err.message;
    }
  });
}

// An htmx action the server refused (a 4xx JSON {"detail"}) shows its reason where the action's
// answer would have gone, instead of nothing.
document.addEventListener("htmx:beforeSwap", (e) => {
  const xhr = e.detail.xhr;
  if (xhr.status < 400) return;
  let detail = xhr.statusText;
  try { detail = JSON.parse(xhr.responseText).detail || detail; } catch (_) { /* not JSON */ }
  const span = Object.assign(document.createElement("span"), {className: "error", textContent: detail});
  span.setAttribute("role", "alert");
  e.detail.shouldSwap = true;
  e.detail.isError = false;
  e.detail.serverResponse = span.outerHTML;
});

// Times are shown in the course's time zone with its offset ("2026-12-01 23:59 UTC+08:00",
// app/pages/views/clock.py). Where the viewer's clock has another offset at that moment, their own
// time follows in small print, so nobody converts a deadline in their head.
function localTimes(root) {
  const two = (n) => String(n).padStart(2, "0");
  for (const el of root.querySelectorAll("time[data-local]:not([data-shown])")) {
    el.dataset.shown = "yes";
    const at = new Date(el.getAttribute("datetime"));
    const offset = el.textContent.match(/UTC(?:([+-])(\d\d):(\d\d))?$/);
    if (!offset || Number.isNaN(at.getTime())) continue;
    const course = offset[1] ? (offset[1] === "-" ? -1 : 1) * (Number(offset[2]) * 60 + Number(offset[3])) : 0;
    if (-at.getTimezoneOffset() === course) continue;
    const mine = `${at.getFullYear()}-${two(at.getMonth() + 1)}-${two(at.getDate())} ${two(at.getHours())}:${two(at.getMinutes())}`;
    el.after(Object.assign(document.createElement("span"), {className: "small local-time", textContent: ` (your time: ${mine})`}));
  }
}

// On a phone a table reads as cards, one per row (style.css); each cell is labelled with its
// column's header so that "WA" or "0.41" still says what it is. The board keeps its columns.
function labelCells(root) {
  for (const table of root.querySelectorAll("main table:not(.board)")) {
    const heads = [...table.querySelectorAll(":scope > thead th")].map((th) => th.textContent.trim());
    if (!heads.length) continue;
    for (const row of table.querySelectorAll(":scope > tbody > tr")) {
      let column = 0;
      for (const cell of row.children) {
        if (!cell.hasAttribute("data-label")) cell.dataset.label = cell.colSpan > 1 ? "" : heads[column] || "";
        column += cell.colSpan;
      }
    }
  }
}

document.addEventListener("DOMContentLoaded", () => {
  setupSubmit(); setupLive(); setupCustom(); setupBoard(); localTimes(document); labelCells(document);
});
document.addEventListener("htmx:afterSettle", () => { localTimes(document); labelCells(document); });  // swapped-in too

// Sortable boards: a click on a header sorts the rows by that column (numbers by their
// data-value, so "AC" times and verdicts sort sensibly); without JavaScript the table reads as is.
// The scoreboard's choice is kept when a pushed change brings a new table.
let boardSort = null;  // {column, numeric, ascending} last chosen on the scoreboard

function sortTable(table, column, numeric, ascending) {
  const header = table.tHead.rows[0].children[column];
  if (header) header.dataset.order = ascending ? "asc" : "desc";
  const key = (row) => {
    const cell = row.children[column];
    const raw = cell.dataset.value ?? cell.textContent.trim();
    if (!numeric) return raw;
    const value = parseFloat(raw);
    return Number.isNaN(value) ? Infinity : value;
  };
  const body = table.tBodies[0];
  const rows = Array.from(body.rows).filter((row) => row.children.length > 1);
  rows.sort((a, b) => (key(a) > key(b) ? 1 : key(a) < key(b) ? -1 : 0) * (ascending ? 1 : -1));
  rows.forEach((row) => body.appendChild(row));
}

document.addEventListener("click", (event) => {
  const header = event.target.closest("table.sortable th[data-sort]");
  if (!header) return;
  const table = header.closest("table");
  const column = Array.from(header.parentNode.children).indexOf(header);
  const numeric = header.dataset.sort === "num";
  const ascending = header.dataset.order !== "asc";
  sortTable(table, column, numeric, ascending);
  if (table.closest("#board")) boardSort = {column, numeric, ascending};
});

// The scoreboard follows the server's pushes instead of polling: GET /api/scoreboard/events sends
// `scoreboard` with {"seq": N} at connect and whenever the board may have changed (coalesced to
// one every few seconds). When seq moves, the table is fetched again with its ETag (If-None-Match:
// a 304, nothing swapped, when this board did not change), after a random wait of up to
// BOARD_JITTER_MS, so that hundreds of open tabs do not ask in the same millisecond. The first
// event checks once (the page may be older than the stream), as does one after a reconnect whose
// seq moved meanwhile. A stream the server refuses is tried again later, backing off.
const BOARD_JITTER_MS = 2000;

function setupBoard() {
  const board = document.getElementById("board");
  if (!board || !board.dataset.events || typeof EventSource === "undefined") return;
  let waiting = null;
  let seen;  // the last seq acted on (undefined: none yet)
  const refetch = () => {
    if (waiting !== null) return;  // one refetch is due already
    waiting = setTimeout(() => { waiting = null; htmx.trigger(board, "board-changed"); },
                         Math.random() * BOARD_JITTER_MS);
  };
  const changed = (event) => {
    let seq = null;
    try { seq = JSON.parse(event.data).seq; } catch (_) { /* no seq: refetch */ }
    if (seq !== null && seq === seen) return;
    seen = seq;
    refetch();
  };
  let backoff = 5000;
  const connect = () => {
    const source = new EventSource(board.dataset.events);
    source.addEventListener("scoreboard", changed);
    source.addEventListener("open", () => { backoff = 5000; });
    source.addEventListener("error", () => {
      if (source.readyState !== EventSource.CLOSED) return;  // the browser reconnects itself
      setTimeout(connect, backoff * (1 + Math.random()));
      backoff = Math.min(backoff * 2, 300000);
    });
  };
  connect();
}

// Buttons and forms marked data-reload-after reload the page once their request is answered; with
// a value, a refusal's message goes into the element of that id instead. (Not htmx's hx-on: it
// evaluates attribute text as code, which the Content-Security-Policy forbids.)
document.addEventListener("htmx:afterRequest", (e) => {
  const marked = e.detail.elt.closest("[data-reload-after]");
  if (!marked) return;
  const errorTarget = marked.dataset.reloadAfter;
  if (!errorTarget || e.detail.successful) { location.reload(); return; }
  let detail = e.detail.xhr.statusText;
  try { detail = JSON.parse(e.detail.xhr.responseText).detail || detail; } catch (_) { /* not JSON */ }
  document.getElementById(errorTarget).textContent = detail;
});

document.addEventListener("htmx:configRequest", (e) => {
  const etag = e.detail.elt.id === "board" && e.detail.elt.dataset.etag;
  if (etag) e.detail.headers["If-None-Match"] = etag;
});

document.addEventListener("htmx:beforeSwap", (e) => {
  if (e.detail.elt.id !== "board") return;
  const xhr = e.detail.xhr;
  if (xhr.status === 304) {  // this board did not change
    e.detail.shouldSwap = false;
    return;
  }
  const etag = xhr.getResponseHeader("ETag");
  if (etag && xhr.status === 200) e.detail.elt.dataset.etag = etag;
});

document.addEventListener("htmx:afterSwap", (e) => {
  if (e.detail.elt.id !== "board" || !boardSort) return;
  const table = e.detail.elt.querySelector("table.sortable");
  if (table) sortTable(table, boardSort.column, boardSort.numeric, boardSort.ascending);
});
