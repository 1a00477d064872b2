// mcpgym web UI: a person plays the environment through the agent's own transport.
// Simulation: one WebSocket per tab (its own session and episode). Production: MCP over /mcp.
import { buildForm, h, normalisePath } from "./form.js";
import { historyRow, resultCard, timeline, tree } from "./view.js";

const $ = (id) => document.getElementById(id);
const config = JSON.parse($("mcpgym-config").textContent);
const simulation = config.mode === "simulation";
const S = {
  wire: null, connected: false, full: null, busy: false, tools: [], tool: null, form: null,
  history: [], rewards: [], doneAt: null, done: false, last: null, replay: null, tab: "form",
};

// -- wire: the two transports the page may use --------------------------------------------------

/** One WebSocket session: JSON frames with correlation ids (the server echoes `id`). */
class WsClient {
  constructor(url, hooks) { this.url = url; this.hooks = hooks; this.pending = new Map(); this.next = 1; }
  open() {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(this.url);
      this.ws = ws;
      ws.onopen = () => resolve();
      ws.onmessage = (ev) => {
        let frame;
        try { frame = JSON.parse(ev.data); } catch { return; }
        const waiter = this.pending.get(frame.id);
        if (waiter) { this.pending.delete(frame.id); waiter.resolve(frame); } else this.hooks.stray(frame);
      };
      ws.onclose = () => {
        for (const w of this.pending.values()) w.reject(new Error("the session closed"));
        this.pending.clear();
        reject(new Error("closed"));
        this.hooks.closed();
      };
    });
  }
  close() { if (this.ws && this.ws.readyState === WebSocket.OPEN) this.ws.close(1000); }
  send(frame) {
    const id = `w${this.next++}`;
    return new Promise((resolve, reject) => {
      if (!this.ws || this.ws.readyState !== WebSocket.OPEN) { reject(new Error("not connected")); return; }
      this.pending.set(id, { resolve, reject });
      this.ws.send(JSON.stringify({ ...frame, id }));
    });
  }
}

/** MCP over Streamable HTTP (2025-11-25 sessions); answers may come as JSON or as SSE. */
class McpClient {
  constructor(url, token, version) { this.url = url; this.token = token; this.version = version; this.session = null; this.protocol = null; this.next = 1; }
  async post(body) {
    const headers = { "Content-Type": "application/json", Accept: "application/json, text/event-stream" };
    if (this.token) headers.Authorization = `Bearer ${this.token}`;
    if (this.session) headers["Mcp-Session-Id"] = this.session;
    if (this.protocol) headers["MCP-Protocol-Version"] = this.protocol;
    const res = await fetch(this.url, { method: "POST", headers, body: JSON.stringify(body), cache: "no-store", credentials: "omit" });
    if (res.status === 401 || res.status === 403) throw Object.assign(new Error(`HTTP ${res.status}`), { code: res.status });
    return res;
  }
  async request(method, params) {
    const id = this.next++;
    const res = await this.post({ jsonrpc: "2.0", id, method, params });
    const sid = res.headers.get("mcp-session-id");
    if (sid) this.session = sid;
    const text = await res.text();
    let msg = null;
    if ((res.headers.get("content-type") || "").includes("text/event-stream")) {
      for (const block of text.split(/\r?\n\r?\n/)) {
        const data = block.split(/\r?\n/).filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trimStart()).join("\n");
        if (!data) continue;
        try { const m = JSON.parse(data); if (m.id === id) msg = m; } catch { /* not ours */ }
      }
    } else {
      try { msg = JSON.parse(text); } catch { msg = null; }
    }
    if (!msg) throw Object.assign(new Error(`HTTP ${res.status}: no JSON-RPC answer`), { code: res.status });
    if (msg.error) throw Object.assign(new Error(msg.error.message), { code: msg.error.code, data: msg.error.data });
    return msg.result;
  }
  /** End the MCP session when the tab goes away (`keepalive` lets the request outlive it). */
  close() {
    if (!this.session) return;
    const headers = { "Mcp-Session-Id": this.session };
    if (this.token) headers.Authorization = `Bearer ${this.token}`;
    if (this.protocol) headers["MCP-Protocol-Version"] = this.protocol;
    fetch(this.url, { method: "DELETE", headers, keepalive: true, credentials: "omit" }).catch(() => {});
    this.session = null;
  }
  async initialize() {
    const r = await this.request("initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "mcpgym-web", version: this.version } });
    this.protocol = r.protocolVersion;
    await this.post({ jsonrpc: "2.0", method: "notifications/initialized" });
    return r;
  }
}

// -- status, alerts, enabling ----------------------------------------------------------------

const status = (text) => { $("status").textContent = text; };
function alertBox(text, extra) {
  const box = $("alert");
  box.replaceChildren(h("p", { text }));
  if (extra) box.append(extra);
  box.hidden = false;
}
const clearAlert = () => { $("alert").hidden = true; $("alert").replaceChildren(); };

function setEnabled(on) {
  for (const el of document.querySelectorAll("#episode *, #tools input, #call button, #call input, #call select, #call textarea")) {
    if ("disabled" in el && el.id !== "replay-file") el.disabled = !on;
  }
}

// -- the episode: reset options, tasks ------------------------------------------------------

function taskById(id) { return config.tasks.find((t) => t.id === id); }

function showPrompt(task) {
  $("prompt-card").hidden = !task || !task.prompt;
  $("prompt").textContent = task ? task.prompt : "";
}

function applyTask(id) {
  const task = taskById(id);
  const { seed, episode_id, ...rest } = task ? task.reset : {};
  $("seed").value = seed ?? "";
  $("reset-options").value = Object.keys(rest).length ? JSON.stringify(rest) : "";
  showPrompt(task);
}

function resetOptions() {
  const err = $("reset-options-e");
  const area = $("reset-options");
  err.hidden = true;
  area.removeAttribute("aria-invalid");
  let extra = {};
  if (area.value.trim()) {
    try { extra = JSON.parse(area.value); } catch (e) { extra = e; }
    if (extra instanceof Error || typeof extra !== "object" || extra === null || Array.isArray(extra)) {
      err.textContent = "Must be a JSON object, e.g. {\"task\": \"t1\"}.";
      err.hidden = false;
      area.setAttribute("aria-invalid", "true");
      area.focus();
      return null;
    }
  }
  const opts = { ...extra };
  if ($("seed").value !== "") opts.seed = Number($("seed").value);
  if ($("episode-id").value.trim()) opts.episode_id = $("episode-id").value.trim();
  return opts;
}

function setupEpisode() {
  $("episode").hidden = false;
  if (config.tasks.length) {
    $("task-field").hidden = false;
    const select = $("task");
    select.append(h("option", { value: "", text: "(no task: free play)" }));
    for (const t of config.tasks) select.append(h("option", { value: t.id, text: t.id }));
    const wanted = new URLSearchParams(location.search).get("task");
    if (wanted && taskById(wanted)) select.value = wanted;
    select.addEventListener("change", () => applyTask(select.value));
    applyTask(select.value);
  }
  $("episode").addEventListener("submit", (e) => { e.preventDefault(); reset(); });
}

// -- tools and the call form ------------------------------------------------------------------

function badges(tool) {
  const a = tool.annotations || {};
  const out = [];
  if (a.readOnlyHint) out.push(h("span", { class: "badge ro", text: "read-only" }));
  // In simulation nothing real is at stake: only a tool that says so is marked destructive
  // (production follows MCP's default, destructive unless the annotations clear it).
  else if (simulation ? a.destructiveHint === true : isDestructive(tool)) out.push(h("span", { class: "badge destructive", text: "destructive" }));
  return out;
}

// MCP: destructiveHint defaults to true for a tool that is not read-only; only an explicit
// `destructiveHint: false` (or `readOnlyHint: true`) clears it.
const isDestructive = (tool) => { const a = tool.annotations || {}; return !a.readOnlyHint && a.destructiveHint !== false; };

function renderTools() {
  const list = $("tool-list");
  list.replaceChildren();
  $("tools").hidden = false;
  $("tool-filter-field").hidden = S.tools.length <= 8;
  for (const tool of S.tools) {
    const id = `tool-${tool.name}`;
    const radio = h("input", { type: "radio", name: "tool", id, value: tool.name, onchange: () => selectTool(tool.name) });
    const label = h("label", { for: id, text: tool.name });
    list.append(h("div", { class: "tool", "data-tool": tool.name, title: tool.description || "" }, radio, label, ...badges(tool)));
  }
  filterTools();
  const first = list.querySelector("input");
  if (first) { first.checked = true; selectTool(first.value); }
}

function filterTools() {
  const q = $("tool-filter").value.trim().toLowerCase();
  let shown = 0;
  for (const row of $("tool-list").children) {
    const tool = S.tools.find((t) => t.name === row.dataset.tool);
    const hit = !q || tool.name.toLowerCase().includes(q) || (tool.description || "").toLowerCase().includes(q);
    row.hidden = !hit;
    shown += hit ? 1 : 0;
  }
  $("tool-count").textContent = `${shown} of ${S.tools.length} tools`;
  // the form must be the tool the list shows: a hidden selection gives way to the first shown
  const checked = $("tool-list").querySelector("input:checked");
  if (!checked || checked.closest(".tool").hidden) {
    const first = [...$("tool-list").children].find((row) => !row.hidden);
    const radio = first && first.querySelector("input");
    if (radio) { radio.checked = true; selectTool(radio.value); }
  }
}

function selectTool(name) {
  const tool = name === null ? null : S.tools.find((t) => t.name === name);
  S.tool = tool;
  const schema = tool ? tool.input_schema : config.schemas.action;
  $("call").hidden = false;
  $("call-h").textContent = tool ? `Call ${tool.name}` : "Step";
  $("submit").textContent = tool ? "Call tool" : "Step";
  $("call-desc").textContent = tool ? tool.description || "" : "An action for the environment's step.";
  S.form = buildForm(schema || { type: "object" });
  $("panel-form").replaceChildren(S.form.el);
  const examples = $("examples");
  examples.replaceChildren();
  (schema && Array.isArray(schema.examples) ? schema.examples : []).forEach((ex, i) => {
    examples.append(h("button", { type: "button", class: "secondary small", text: `Fill example ${i + 1}`, onclick: () => { S.form.set(ex); syncJson(); } }));
  });
  $("call-errors").hidden = true;
  showTab("form");
  setEnabled(S.connected);
}

function syncJson() { $("json-args").value = JSON.stringify(S.form.value(), null, 2); }

function showTab(which) {
  if (which === S.tab && which === "form" && !$("panel-form").hidden) return;
  const err = $("json-args-e");
  if (which === "form" && S.tab === "json") {
    let parsed;
    try { parsed = JSON.parse($("json-args").value || "{}"); } catch (e) {
      err.textContent = `Not valid JSON: ${e.message}`; err.hidden = false;
      $("json-args").setAttribute("aria-invalid", "true"); $("json-args").focus();
      return;
    }
    S.form.set(parsed);
  }
  if (which === "json") syncJson();
  err.hidden = true;
  $("json-args").removeAttribute("aria-invalid");
  S.tab = which;
  for (const [tab, panel] of [["tab-form", "panel-form"], ["tab-json", "panel-json"]]) {
    const on = tab === `tab-${which}`;
    $(tab).setAttribute("aria-selected", String(on));
    $(tab).tabIndex = on ? 0 : -1;
    $(panel).hidden = !on;
  }
}

function setupTabs() {
  $("tab-form").addEventListener("click", () => showTab("form"));
  $("tab-json").addEventListener("click", () => showTab("json"));
  $("call").querySelector("[role=tablist]").addEventListener("keydown", (e) => {
    if (e.key !== "ArrowLeft" && e.key !== "ArrowRight") return;
    const next = S.tab === "form" ? "json" : "form";
    showTab(next);
    $(`tab-${next}`).focus();
  });
}

/** The arguments to send, or null when the form shows errors. */
function readArguments() {
  $("call-errors").hidden = true;
  if (S.tab === "json") {
    try {
      const v = JSON.parse($("json-args").value || "{}");
      $("json-args-e").hidden = true;
      return v;
    } catch (e) {
      $("json-args-e").textContent = `Not valid JSON: ${e.message}`;
      $("json-args-e").hidden = false;
      $("json-args").focus();
      return null;
    }
  }
  const bad = S.form.validate();
  if (bad) { unmapped(bad.unmapped); status(`${bad.errors.length} field(s) need attention.`); return null; }
  return S.form.value();
}

function unmapped(list) {
  const box = $("call-errors");
  box.hidden = !list.length;
  box.textContent = list.map((e) => (e.path ? `${e.path}: ${e.message}` : e.message)).join(" ");
}

/** Field errors the server sent (sdk `errors`, Calendar Gym `error.errors`, single `field`). */
function fieldErrors(err) {
  const out = [];
  const walk = (e) => {
    if (!e || typeof e !== "object") return;
    if (Array.isArray(e.errors)) for (const x of e.errors) if (x && x.field !== undefined) out.push({ path: normalisePath(x.field).replace(/^arguments\./, ""), message: x.message || x.code || "invalid" });
    if (!Array.isArray(e.errors) && e.field !== undefined && e.message) out.push({ path: normalisePath(e.field), message: e.message });
    if (e.error && typeof e.error === "object") walk(e.error);
  };
  walk(err);
  return out;
}

function mapServerErrors(err) {
  const list = fieldErrors(err);
  if (!list.length) return;
  if (S.tab === "json") showTab("form"); // the JSON goes into the form, so the fields can show it
  unmapped(S.form.showErrors(list));
}

// -- live view ----------------------------------------------------------------------------------

function show(row, prev) {
  $("result").replaceChildren(...resultCard(row.card));
  if (simulation) {
    $("obs-card").hidden = row.observation === undefined;
    if (row.observation !== undefined) $("obs-tree").replaceChildren(tree(row.observation, prev ? prev.observation : undefined));
    $("state-card").hidden = row.state === undefined;
    if (row.state !== undefined) $("state-tree").replaceChildren(tree(row.state, prev ? prev.state : undefined));
  }
}

function record(row) {
  row.index = S.history.length;
  row.t = new Date().toISOString();
  S.history.push(row);
  if (!S.replay) $("history").tBodies[0].append(historyRow(row, row.index));
  $("export").disabled = false;
  if (!S.replay) show(row, S.last);
  S.last = row;
  if (row.state && row.state.episode_id) {
    $("episode-badge").hidden = false;
    $("episode-badge").textContent = `episode ${row.state.episode_id} · step ${row.state.step_count ?? "?"}`;
  }
}

function drawTimeline() {
  $("timeline-card").hidden = !simulation;
  timeline($("timeline"), S.rewards, S.doneAt);
  const total = S.rewards.reduce((a, r) => a + (r ?? 0), 0);
  $("reward-total").textContent = `${S.rewards.length} step(s), total reward ${Number(total.toFixed(4))}${S.done ? " · episode done" : ""}`;
}

// -- simulation over /ws ------------------------------------------------------------------------

async function connectWs() {
  clearAlert();
  S.full = null;
  status("Connecting…");
  const url = `${location.protocol === "https:" ? "wss" : "ws"}://${location.host}${config.paths.ws}`;
  S.wire = new WsClient(url, {
    stray(frame) { if (frame.type === "error" && frame.data && frame.data.code === "CAPACITY_REACHED") S.full = frame.data; },
    closed: onClosed,
  });
  try { await S.wire.open(); } catch { return; }
  S.connected = true;
  setEnabled(true);
  await reset();
}

function onClosed() {
  const wasConnected = S.connected;
  S.connected = false;
  setEnabled(false);
  const again = h("button", { type: "button", text: "Start a new session", onclick: () => connectWs() });
  if (S.full) {
    const max = S.full.max_sessions ?? config.limits.max_sessions;
    status("Server full.");
    alertBox(`Server full: all ${max} of ${max} sessions are in use. Close another tab or try again later.`, again);
  } else {
    status("Disconnected.");
    alertBox(`${wasConnected ? "Disconnected from the server: this tab's session has ended." : "Could not connect to the server."} A new session means a new episode.`, again);
  }
}

async function reset() {
  if (!S.connected || S.busy) return;
  const opts = resetOptions();
  if (opts === null) return;
  S.busy = true;
  status("Resetting…");
  try {
    const reply = await S.wire.send({ type: "reset", data: opts });
    if (reply.type === "error") {
      status("Reset failed.");
      record({ kind: "reset", request: opts, card: { title: "reset failed", error: reply.data }, error: reply.data });
      return;
    }
    const st = await S.wire.send({ type: "state" });
    S.rewards = []; S.doneAt = null; S.done = reply.data.done;
    const meta = (reply.data.observation && reply.data.observation.metadata) || {};
    const given = typeof meta.prompt === "string" ? { prompt: meta.prompt } : null;
    showPrompt(taskById($("task").value) || given);
    record({ kind: "reset", request: opts, observation: reply.data.observation, reward: reply.data.reward, done: reply.data.done,
      state: st.type === "state" ? st.data : undefined, card: { title: "reset", result: reply.data.observation, empty: "Episode started." } });
    drawTimeline();
    status(`Episode ${S.last.state ? S.last.state.episode_id : ""} started.`);
  } catch (e) { status(`Reset failed: ${e.message}`); } finally { S.busy = false; }
}

async function step(args) {
  const action = S.tool ? { type: "call_tool", tool_name: S.tool.name, arguments: args } : args;
  const reply = await S.wire.send({ type: "step", data: action });
  const base = S.tool ? { kind: "call", tool: S.tool.name, arguments: args } : { kind: "step", request: args };
  if (reply.type === "error") {
    mapServerErrors(reply.data);
    record({ ...base, error: reply.data, card: { title: `${base.tool || "step"} refused`, error: reply.data } });
    status(`Refused: ${reply.data.message}`);
    return;
  }
  const { observation, reward, done } = reply.data;
  const st = await S.wire.send({ type: "state" });
  S.rewards.push(reward);
  S.done = done;
  if (done) S.doneAt = S.rewards.length - 1;
  const error = observation && observation.error;
  if (error) mapServerErrors(error);
  record({ ...base, observation, reward, done, state: st.type === "state" ? st.data : undefined, error: error || undefined,
    card: { title: base.tool || "step", error: error || undefined, result: observation && "result" in observation ? observation.result : observation } });
  drawTimeline();
  status(done ? `Episode done (reward ${reward}). Reset to play again.` : error ? `${base.tool}: ${error.error_type}` : `${base.tool || "step"}: ok (reward ${reward ?? "–"})`);
}

// -- production over /mcp -----------------------------------------------------------------------

async function connectMcp(token) {
  clearAlert();
  status("Connecting…");
  S.wire = new McpClient(config.paths.mcp, token, config.mcpgym_version);
  try {
    await S.wire.initialize();
    const listed = await S.wire.request("tools/list", {});
    S.tools = (listed.tools || []).map((t) => ({ name: t.name, description: t.description, input_schema: t.inputSchema, annotations: t.annotations }));
  } catch (e) {
    S.connected = false;
    status("Not connected.");
    alertBox(e.code === 401 ? "The server refused the token." : `Could not connect: ${e.message}`);
    return;
  }
  S.connected = true;
  $("auth").hidden = true;
  renderTools();
  setEnabled(true);
  status(`Connected: ${S.tools.length} tools.`);
}

async function callMcp(args) {
  const tool = S.tool;
  let result;
  try { result = await S.wire.request("tools/call", { name: tool.name, arguments: args }); } catch (e) {
    const error = { code: e.code, message: e.message, data: e.data };
    record({ kind: "call", tool: tool.name, arguments: args, error, card: { title: `${tool.name} refused`, error } });
    status(`Refused: ${e.message}`);
    return;
  }
  const error = result.isError ? { message: "the tool reported an error", ...(result.structuredContent || {}) } : undefined;
  if (error) mapServerErrors(result.structuredContent);
  record({ kind: "call", tool: tool.name, arguments: args, result, error,
    card: { title: tool.name, error, result: result.content, structured: error ? undefined : result.structuredContent } });
  status(`${tool.name}: ${result.isError ? "error" : "ok"}`);
}

// -- submit, export, replay, keys ------------------------------------------------------------

async function submit() {
  if (!S.connected || S.busy || S.replay) return;
  const args = readArguments();
  if (args === null) return;
  if (!simulation && S.tool && isDestructive(S.tool) && !window.confirm(`${S.tool.name} may change or delete real data. Call it?`)) return;
  S.busy = true;
  status("Working…");
  try { await (simulation ? step(args) : callMcp(args)); } catch (e) { status(`Failed: ${e.message}`); } finally { S.busy = false; }
}

function exportJsonl() {
  const text = S.history.map(({ card, ...row }) => JSON.stringify({ ...row, mode: config.mode, env: config.name })).join("\n") + "\n";
  const url = URL.createObjectURL(new Blob([text], { type: "application/x-ndjson" }));
  const a = h("a", { href: url, download: `mcpgym-${config.name}-${new Date().toISOString().replace(/[:.]/g, "-")}.jsonl` });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

function cardFor(row) {
  if (row.kind === "reset") return { title: "reset", result: row.observation, error: row.error };
  if (row.result && row.result.content) return { title: row.tool, error: row.error, result: row.result.content };
  return { title: row.tool || row.kind, error: row.error, result: row.observation && "result" in row.observation ? row.observation.result : row.observation };
}

async function loadReplay(file) {
  const text = await file.text();
  const rows = [];
  const lines = text.split("\n");
  for (let i = 0; i < lines.length; i++) {
    if (!lines[i].trim()) continue;
    try { rows.push(JSON.parse(lines[i])); } catch (e) { alertBox(`${file.name} line ${i + 1} is not JSON: ${e.message}`); return; }
  }
  if (!rows.length) { alertBox(`${file.name} has no rows.`); return; }
  S.replay = rows;
  const body = $("history").tBodies[0];
  body.replaceChildren(...rows.map((r, i) => historyRow(r, i)));
  $("replay").hidden = false;
  $("replay-info").textContent = `Replaying ${file.name}: ${rows.length} rows.`;
  const scrub = $("scrubber");
  scrub.max = String(rows.length - 1);
  scrub.value = "0";
  scrubTo(0);
  setEnabled(false);
  status(`Replay of ${rows.length} rows.`);
}

function scrubTo(i) {
  const rows = S.replay;
  const row = rows[i];
  show({ ...row, card: cardFor(row) }, i > 0 ? rows[i - 1] : undefined);
  for (const tr of $("history").tBodies[0].rows) tr.classList.toggle("current", tr.dataset.index === String(i));
  $("scrubber").setAttribute("aria-valuetext", `row ${i + 1} of ${rows.length}: ${row.tool || row.kind}`);
  const rewards = rows.slice(0, i + 1).filter((r) => r.kind !== "reset" && "reward" in r).map((r) => r.reward);
  if (simulation) timeline($("timeline"), rewards, row.done ? rewards.length - 1 : null);
  const total = rewards.reduce((a, r) => a + (r ?? 0), 0);
  $("reward-total").textContent = `Replay: ${rewards.length} step(s), total reward ${Number(total.toFixed(4))}`;
}

function exitReplay() {
  S.replay = null;
  $("replay").hidden = true;
  $("replay-file").value = "";
  $("history").tBodies[0].replaceChildren(...S.history.map((r, i) => historyRow(r, i)));
  if (S.last) show(S.last, S.history[S.history.length - 2]);
  drawTimeline();
  setEnabled(S.connected);
  status("Back to the live session.");
}

function keys(e) {
  if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) {
    if (!$("call").hidden) { e.preventDefault(); submit(); }
    return;
  }
  const t = e.target;
  if (e.ctrlKey || e.metaKey || e.altKey || (t && (t.isContentEditable || /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName)))) return;
  if (e.key === "/" && !$("tools").hidden) {
    e.preventDefault();
    (!$("tool-filter-field").hidden ? $("tool-filter") : $("tool-list").querySelector("input:checked") || $("tool-list").querySelector("input")).focus();
  } else if (e.key === "r" && simulation && S.connected) {
    e.preventDefault();
    reset();
  }
}

function main() {
  document.title = `${config.name} · mcpgym`;
  $("env-name").textContent = config.name;
  $("mode-badge").textContent = config.mode;
  $("versions").textContent = `${config.name} ${config.version} · mcpgym ${config.mcpgym_version}`;
  $("call").addEventListener("submit", (e) => { e.preventDefault(); submit(); });
  $("tool-filter").addEventListener("input", filterTools);
  $("export").addEventListener("click", exportJsonl);
  $("replay-file").addEventListener("change", (e) => { const f = e.target.files[0]; if (f) loadReplay(f); });
  $("scrubber").addEventListener("input", (e) => scrubTo(Number(e.target.value)));
  $("replay-exit").addEventListener("click", exitReplay);
  document.addEventListener("keydown", keys);
  window.addEventListener("pagehide", () => { if (S.wire && S.wire.close) S.wire.close(); });
  setupTabs();
  if (simulation) {
    setupEpisode();
    S.tools = config.tools;
    if (config.tools_env) renderTools(); else selectTool(null);
    drawTimeline();
    setEnabled(false);
    connectWs();
  } else {
    $("banner").hidden = false;
    $("banner").textContent = "Production server: every tool call has real effects on live data.";
    if (config.auth) {
      $("auth").hidden = false;
      status("Enter the bearer token to connect.");
      $("auth").addEventListener("submit", (e) => {
        e.preventDefault();
        const token = $("token").value;
        $("token").value = ""; // held in this tab's memory only, never stored
        connectMcp(token);
      });
    } else connectMcp("");
  }
}

main();
