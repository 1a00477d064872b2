// Viewers: result card, JSON tree with changes highlighted, reward timeline, history rows.
// Every environment string is set with textContent: data, never HTML.
import { h } from "./form.js";

const MAX_CHILDREN = 200; // longer arrays and objects are cut, with a count of what is hidden

const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const isObj = (v) => v !== null && typeof v === "object";

function leafText(v) {
  if (typeof v === "string") return JSON.stringify(v);
  return String(v);
}

/** A JSON tree of `value`; nodes that differ from `prev` (when given) are marked as changed. */
export function tree(value, prev, compare = prev !== undefined) {
  const root = h("ul", { class: "tree", role: "tree" });
  root.append(treeNode(null, value, prev, compare, 0, true));
  return root;
}

function changedMark(el) {
  el.classList.add("changed");
  el.append(h("span", { class: "sr-only", text: " (changed)" }));
}

function treeNode(key, value, prev, compare, depth, isRoot = false) {
  const li = h("li", { role: "treeitem" });
  const changed = compare && !same(value, prev);
  const label = key === null ? null : h("span", { class: "k", text: `${key}: ` });
  if (!isObj(value)) {
    const v = h("span", { class: "v", text: leafText(value) });
    li.append(...[label, v].filter(Boolean));
    if (changed) changedMark(v);
    return li;
  }
  const entries = Array.isArray(value) ? value.map((v, i) => [i, v]) : Object.entries(value);
  const summary = h("summary", {}, label, h("span", { class: "desc", text: Array.isArray(value) ? `[${entries.length}]` : `{${entries.length}}` }));
  if (changed) changedMark(summary);
  const details = h("details", { open: isRoot || depth < 2 || changed }, summary);
  const ul = h("ul", { role: "group" });
  const prevObj = isObj(prev) ? prev : undefined;
  for (const [k, v] of entries.slice(0, MAX_CHILDREN)) {
    const before = prevObj === undefined ? undefined : prevObj[k];
    ul.append(treeNode(k, v, before, compare, depth + 1));
  }
  if (entries.length > MAX_CHILDREN) ul.append(h("li", { class: "desc", text: `… ${entries.length - MAX_CHILDREN} more` }));
  details.append(ul);
  li.append(details);
  return li;
}

/** MCP-style content blocks: text and images (base64 `data`), anything else as JSON. */
function blocks(list) {
  return list.map((b) => {
    if (b && b.type === "text") return h("pre", { text: b.text ?? "" });
    if (b && b.type === "image" && typeof b.data === "string" && /^image\/[\w.+-]+$/.test(b.mimeType || "")) {
      return h("img", { src: `data:${b.mimeType};base64,${b.data}`, alt: b.alt || "image from the tool result" });
    }
    if (b && b.type === "resource" && b.resource && typeof b.resource.text === "string") {
      return h("div", {}, h("p", { class: "desc", text: `resource ${b.resource.uri || ""} (${b.resource.mimeType || "text"})` }), h("pre", { text: b.resource.text }));
    }
    return tree(b);
  });
}

const isBlocks = (v) => Array.isArray(v) && v.length > 0 && v.every((b) => b && typeof b === "object" && typeof b.type === "string" && ("text" in b || "data" in b || "resource" in b));

/** The result card's content for a tool observation, an MCP result or an error frame. */
export function resultCard(entry) {
  const out = [];
  const title = entry.title ? h("p", {}, h("strong", { text: entry.title })) : null;
  if (title) out.push(title);
  if (entry.error) {
    const err = entry.error;
    const box = h("div", { class: "result-error" },
      h("p", {}, h("strong", { text: err.error_type || err.code || "error" }), ": ", err.message || ""));
    box.append(tree(err));
    out.push(box);
    return out;
  }
  const r = entry.result;
  if (r === undefined || r === null) out.push(h("p", { class: "desc", text: entry.empty || "No result value." }));
  else if (typeof r === "string") out.push(h("pre", { text: r }));
  else if (isBlocks(r)) out.push(...blocks(r));
  else out.push(tree(r));
  if (entry.structured !== undefined && entry.structured !== null) out.push(h("p", { class: "desc", text: "Structured content:" }), tree(entry.structured));
  return out;
}

/** The reward timeline: one row per scored step, the done marker on the last. */
export function timeline(list, rewards, doneAt) {
  list.replaceChildren();
  const max = Math.max(1e-9, ...rewards.map((r) => Math.abs(r ?? 0)));
  rewards.forEach((r, i) => {
    const bar = h("div", { class: `bar${(r ?? 0) < 0 ? " neg" : ""}`, "aria-hidden": "true" });
    bar.style.width = `${Math.round((Math.abs(r ?? 0) / max) * 100)}%`;
    const li = h("li", {}, h("span", { text: `step ${i + 1}` }), bar, h("span", { text: r === null || r === undefined ? "–" : String(Number(r.toFixed(4))) }));
    li.setAttribute("aria-label", `step ${i + 1}: reward ${r ?? "none"}${doneAt === i ? ", done" : ""}`);
    list.append(li);
    if (doneAt === i) list.append(h("li", { class: "done-marker", text: "■ done" }));
  });
}

const short = (v) => { const s = v === undefined ? "" : JSON.stringify(v); return s.length > 120 ? `${s.slice(0, 117)}…` : s; };

/** One history table row. */
export function historyRow(row, index) {
  return h("tr", { "data-index": String(index) },
    h("td", { text: String(index + 1) }),
    h("td", { text: row.kind === "call" ? row.tool : row.kind }),
    h("td", { class: "args", text: short(row.kind === "call" ? row.arguments : row.request) }),
    h("td", { text: row.reward === null || row.reward === undefined ? "–" : String(row.reward) }),
    h("td", { text: row.done ? "yes" : "no" }));
}
