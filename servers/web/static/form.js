// Forms from JSON Schema: every control labelled, values read back as JSON, errors shown inline.
// Rendering uses textContent only: schema titles and descriptions are data, never HTML.

let uid = 0;
const nextId = () => `f${++uid}`;
const MAX_DEPTH = 8; // deeper (or recursive) schemas fall back to a JSON textarea

export function h(tag, props = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(props)) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "text") el.textContent = v;
    else if (k === "class") el.className = v;
    else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
    else if (k in el && typeof v !== "string") el[k] = v;
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  for (const c of children.flat()) if (c != null) el.append(c);
  return el;
}

/** Follow `$ref`s into the root's `$defs`, keeping sibling keywords (description, default). */
export function resolve(schema, root) {
  let s = schema === true || schema == null ? {} : schema;
  for (let hops = 0; s && s.$ref && hops < 32; hops++) {
    const m = /^#\/(\$defs|definitions)\/(.+)$/.exec(s.$ref);
    const target = m ? (root[m[1]] || {})[decodeURIComponent(m[2])] : undefined;
    const { $ref, ...rest } = s;
    s = { ...(target || {}), ...rest };
  }
  return s || {};
}

const isNull = (s) => s && (s.type === "null" || (s.const === null && !s.type));

/** `anyOf [X, null]` (or `type: [T, "null"]`) → X with `nullable`. */
function unwrap(schema, root) {
  let s = resolve(schema, root);
  let nullable = false;
  const alts = s.anyOf || s.oneOf;
  if (alts && alts.some(isNull)) {
    const rest = alts.filter((a) => !isNull(a));
    nullable = true;
    const { anyOf, oneOf, ...keep } = s;
    s = rest.length === 1 ? { ...resolve(rest[0], root), ...keep } : { ...keep, anyOf: rest };
  }
  if (Array.isArray(s.type) && s.type.includes("null")) {
    const types = s.type.filter((t) => t !== "null");
    nullable = true;
    s = { ...s, type: types.length === 1 ? types[0] : types };
  }
  return { s, nullable };
}

function kindOf(s, depth) {
  if (depth > MAX_DEPTH) return "json";
  if ("const" in s) return "const";
  if (Array.isArray(s.enum)) return "enum";
  if ((s.oneOf || s.anyOf) && (s.oneOf || s.anyOf).length > 0) return "union";
  const t = s.type || (s.properties ? "object" : undefined);
  if (t === "object") {
    if (s.properties || s.additionalProperties === false) return "object";
    const extra = s.additionalProperties;
    return extra && extra !== true && Object.keys(extra).length ? "map" : "json"; // free-form: JSON
  }
  if (t === "array" && !Array.isArray(s.items)) return "array";
  if (["string", "integer", "number", "boolean"].includes(t)) return t;
  return "json";
}

const titleOf = (s, fallback) => s.title || fallback;
const exampleOf = (s) => (Array.isArray(s.examples) && s.examples.length ? s.examples[0] : s["x-example"]);
const isEmpty = (v) => v === undefined;

/** The field frame: label, control, description, error line. */
function frame(ctx, opts, control, id) {
  const err = h("p", { id: `${id}-e`, class: "err", hidden: true });
  const schema = opts.schema || opts.s || {};
  const desc = schema.description ? h("p", { id: `${id}-d`, class: "desc", text: schema.description }) : null;
  control.setAttribute("aria-describedby", [desc ? `${id}-d` : "", `${id}-e`].join(" ").trim());
  const label = h("label", { for: id, text: opts.label });
  const star = opts.required ? h("span", { class: "req", "aria-hidden": "true", text: " *" }) : null;
  if (opts.required) control.setAttribute("aria-required", "true");
  const isCheck = control.type === "checkbox";
  const wrap = isCheck
    ? h("div", { class: "field check" }, control, label, star, desc, err)
    : h("div", { class: "field" }, label, star, control, desc, err);
  ctx.fields.set(opts.path, { input: control, err });
  return wrap;
}

function exampleButton(node, s, label) {
  const ex = exampleOf(s);
  if (ex === undefined) return null;
  return h("button", { type: "button", class: "small", text: "Fill example", "aria-label": `Fill example for ${label}`, onclick: () => node.set(ex) });
}

function fail(errors, path, message) { errors.push({ path, message }); }

function primitive(ctx, kind, opts) {
  const { s } = opts;
  const id = nextId();
  let input;
  // a checkbox cannot say "not set": only when a value is always sent (required or defaulted)
  if (kind === "boolean" && !opts.nullable && (opts.required || s.default !== undefined)) {
    input = h("input", { id, type: "checkbox" });
  } else if (kind === "boolean") {
    input = h("select", { id }, h("option", { value: "", text: "(not set)" }), h("option", { value: "true", text: "true" }), h("option", { value: "false", text: "false" }));
  } else if (kind === "string" && (s.maxLength > 160 || s.format === "textarea" || s["x-multiline"] || (s.description || "").length > 240)) {
    input = h("textarea", { id, rows: 4, spellcheck: "false" });
  } else if (kind === "string") {
    input = h("input", { id, type: "text", spellcheck: "false" });
    if (s.maxLength) input.maxLength = s.maxLength;
  } else {
    input = h("input", { id, type: "number", step: kind === "integer" ? (s.multipleOf || 1) : (s.multipleOf || "any"), inputmode: kind === "integer" ? "numeric" : "decimal" });
    const lo = s.minimum ?? s.exclusiveMinimum, hi = s.maximum ?? s.exclusiveMaximum;
    if (lo !== undefined) input.min = lo;
    if (hi !== undefined) input.max = hi;
  }
  const node = {
    get() {
      if (input.type === "checkbox") return input.checked;
      const raw = input.value;
      if (kind === "boolean") return raw === "" ? undefined : raw === "true";
      if (raw === "") return undefined;
      if (kind === "string") return raw;
      return Number(raw);
    },
    set(v) {
      if (input.type === "checkbox") input.checked = v === true;
      else input.value = v === undefined || v === null ? "" : String(v);
    },
    validate(errors, needed) {
      const v = node.get();
      const raw = input.value;
      if (isEmpty(v) || (kind === "string" && v === "" && !opts.required)) {
        if (needed && opts.required && input.type !== "checkbox") fail(errors, opts.path, "Required.");
        return;
      }
      if (kind === "integer" || kind === "number") {
        if (!Number.isFinite(v)) return fail(errors, opts.path, `Not a number: ${raw}`);
        if (kind === "integer" && !Number.isInteger(v)) return fail(errors, opts.path, "Must be a whole number.");
        if (s.minimum !== undefined && v < s.minimum) return fail(errors, opts.path, `Must be at least ${s.minimum}.`);
        if (s.maximum !== undefined && v > s.maximum) return fail(errors, opts.path, `Must be at most ${s.maximum}.`);
        if (s.exclusiveMinimum !== undefined && v <= s.exclusiveMinimum) return fail(errors, opts.path, `Must be more than ${s.exclusiveMinimum}.`);
        if (s.exclusiveMaximum !== undefined && v >= s.exclusiveMaximum) return fail(errors, opts.path, `Must be less than ${s.exclusiveMaximum}.`);
      }
      if (kind === "string") {
        if (s.minLength && v.length < s.minLength) return fail(errors, opts.path, `At least ${s.minLength} characters.`);
        if (s.maxLength && v.length > s.maxLength) return fail(errors, opts.path, `At most ${s.maxLength} characters.`);
        if (s.pattern) {
          let re = null;
          try { re = new RegExp(s.pattern, "u"); } catch { re = null; }
          if (re && !re.test(v)) return fail(errors, opts.path, `Must match ${s.pattern}.`);
        }
      }
    },
    focus: () => input.focus(),
  };
  const el = frame(ctx, { ...opts, schema: s }, input, id);
  const ex = exampleButton(node, s, opts.label);
  if (ex) el.append(ex);
  return { ...node, el };
}

function enumNode(ctx, opts) {
  const { s } = opts;
  const id = nextId();
  const values = s.enum;
  const select = h("select", { id });
  if (!opts.required || opts.nullable || s.default === undefined) select.append(h("option", { value: "", text: "(not set)" }));
  // option values are the enum's own (strings as they are, anything else as JSON)
  const key = (v) => (typeof v === "string" ? v : JSON.stringify(v));
  values.forEach((v) => select.append(h("option", { value: key(v), text: v === null ? "null" : String(v) })));
  const node = {
    get: () => (select.value === "" ? undefined : values.find((v) => key(v) === select.value)),
    set(v) { select.value = values.some((x) => key(x) === key(v)) ? key(v) : ""; },
    validate(errors, needed) { if (needed && opts.required && node.get() === undefined) fail(errors, opts.path, "Choose a value."); },
    focus: () => select.focus(),
  };
  return { ...node, el: frame(ctx, opts, select, id) };
}

function constNode(ctx, opts) {
  const id = nextId();
  const input = h("input", { id, type: "text", readOnly: true, value: JSON.stringify(opts.s.const) });
  const el = frame(ctx, opts, input, id);
  return { el, get: () => opts.s.const, set() {}, validate() {}, focus: () => input.focus() };
}

function jsonNode(ctx, opts, expect) {
  const id = nextId();
  const area = h("textarea", { id, rows: 3, spellcheck: "false", placeholder: expect === "object" ? "{ }" : "JSON" });
  const node = {
    get() {
      if (area.value.trim() === "") return undefined;
      try { return JSON.parse(area.value); } catch { return undefined; }
    },
    set(v) { area.value = v === undefined ? "" : JSON.stringify(v, null, 2); },
    validate(errors, needed) {
      if (area.value.trim() === "") { if (needed && opts.required) fail(errors, opts.path, "Required (JSON)."); return; }
      let v;
      try { v = JSON.parse(area.value); } catch (e) { return fail(errors, opts.path, `Not valid JSON: ${e.message}`); }
      if (expect === "object" && (typeof v !== "object" || v === null || Array.isArray(v))) fail(errors, opts.path, "Must be a JSON object.");
    },
    focus: () => area.focus(),
  };
  const el = frame(ctx, { ...opts, label: `${opts.label} (JSON)` }, area, id);
  const ex = exampleButton(node, opts.s, opts.label);
  if (ex) el.append(ex);
  return { ...node, el };
}

function group(ctx, opts, body) {
  const err = h("p", { class: "err", hidden: true });
  const legend = h("legend", {}, opts.label, opts.required ? h("span", { class: "req", "aria-hidden": "true", text: " *" }) : null);
  const fs = h("fieldset", { "data-path": opts.path }, legend);
  if (opts.s.description) fs.append(h("p", { class: "desc", text: opts.s.description }));
  fs.append(...body, err);
  ctx.fields.set(opts.path, { input: fs, err, group: true });
  return fs;
}

function objectNode(ctx, opts) {
  const { s, root } = opts;
  const required = new Set(s.required || []);
  const children = Object.entries(s.properties).map(([key, sub]) => {
    return [key, build(ctx, sub, { root, path: join(opts.path, key), label: key, required: required.has(key), depth: opts.depth + 1 })];
  });
  const visible = children.filter(([key]) => key !== opts.hideKey).map(([, n]) => n.el);
  // An optional group with required fields gets an "include" switch: without it a required
  // checkbox inside would always send the group (e.g. reminders: {useDefault: false}).
  const optional = !opts.top && (!opts.required || opts.nullable) && required.size > 0;
  const includeId = nextId();
  const include = optional ? h("input", { type: "checkbox", id: includeId }) : null;
  const body = h("div", { hidden: optional }, visible);
  if (include) include.addEventListener("change", () => { body.hidden = !include.checked; if (include.checked) node.focus(); });
  const node = {
    get() {
      if (include && !include.checked) return opts.required ? null : undefined;
      const out = {};
      for (const [key, child] of children) { const v = child.get(); if (v !== undefined) out[key] = v; }
      if (!opts.top && !opts.required && Object.keys(out).length === 0) return undefined;
      return out;
    },
    set(v) {
      const obj = v && typeof v === "object" ? v : {};
      if (include) { include.checked = Boolean(v && typeof v === "object"); body.hidden = !include.checked; }
      for (const [key, child] of children) child.set(obj[key]);
    },
    validate(errors, needed) {
      if (include && !include.checked) return;
      const value = node.get();
      const filled = opts.top || opts.required || (value !== undefined && Object.keys(value).some((k) => k !== opts.hideKey));
      for (const [, child] of children) child.validate(errors, needed && filled);
    },
    focus: () => children.length && children[0][1].focus(),
  };
  if (opts.top) { const el = h("div", { class: "fields" }, visible); ctx.fields.set("", { input: el, err: null, group: true }); return { ...node, el }; }
  const head = include ? [h("div", { class: "field check" }, include, h("label", { for: includeId, text: `Include ${opts.label}` }))] : [];
  const el = group(ctx, opts, [...head, body]);
  const ex = exampleButton(node, s, opts.label);
  if (ex) el.querySelector("legend").after(ex);
  return { ...node, el };
}

function arrayNode(ctx, opts) {
  const { s, root } = opts;
  const list = h("div", { class: "items" });
  const items = [];
  const itemSchema = s.items || {};
  const add = h("button", { type: "button", class: "secondary small", text: `Add to ${opts.label}` });
  const renumber = () => items.forEach((it, i) => { it.path = join(opts.path, String(i)); });
  function addItem(value) {
    const index = items.length;
    const child = build(ctx, itemSchema, { root, path: join(opts.path, String(index)), label: `${opts.label} item ${index + 1}`, required: true, depth: opts.depth + 1 });
    const remove = h("button", { type: "button", class: "secondary small", text: "Remove", "aria-label": `Remove ${opts.label} item ${index + 1}` });
    const wrap = h("div", { class: "item" }, child.el, remove);
    const entry = { child, wrap };
    remove.addEventListener("click", () => { items.splice(items.indexOf(entry), 1); wrap.remove(); renumber(); add.focus(); });
    items.push(entry);
    list.append(wrap);
    if (value !== undefined) child.set(value);
    return child;
  }
  add.addEventListener("click", () => addItem().focus());
  const node = {
    get() {
      const vals = items.map((it) => it.child.get()).filter((v) => v !== undefined);
      if (!opts.required && vals.length === 0) return undefined;
      return vals;
    },
    set(v) { items.splice(0).forEach((it) => it.wrap.remove()); (Array.isArray(v) ? v : []).forEach((x) => addItem(x)); },
    validate(errors, needed) {
      items.forEach((it) => it.child.validate(errors, needed));
      const n = items.length;
      if (needed && opts.required && s.minItems && n < s.minItems) fail(errors, opts.path, `At least ${s.minItems} items.`);
      if (s.maxItems !== undefined && n > s.maxItems) fail(errors, opts.path, `At most ${s.maxItems} items.`);
    },
    focus: () => (items.length ? items[0].child.focus() : add.focus()),
  };
  const el = group(ctx, opts, [list, add]);
  return { ...node, el };
}

function mapNode(ctx, opts) {
  const { s, root } = opts;
  const valueSchema = s.additionalProperties;
  const list = h("div", { class: "items" });
  const rows = [];
  const add = h("button", { type: "button", class: "secondary small", text: `Add entry to ${opts.label}` });
  function addRow(key, value) {
    const n = rows.length + 1;
    const kid = nextId();
    const keyInput = h("input", { id: kid, type: "text", spellcheck: "false", value: key || "" });
    const keyField = h("div", { class: "field" }, h("label", { for: kid, text: `${opts.label} key ${n}` }), keyInput);
    const child = build(ctx, valueSchema, { root, path: join(opts.path, key || `#${n}`), label: `${opts.label} value ${n}`, required: true, depth: opts.depth + 1 });
    const remove = h("button", { type: "button", class: "secondary small", text: "Remove", "aria-label": `Remove ${opts.label} entry ${n}` });
    const wrap = h("div", { class: "item" }, keyField, child.el, remove);
    const row = { keyInput, child, wrap };
    remove.addEventListener("click", () => { rows.splice(rows.indexOf(row), 1); wrap.remove(); add.focus(); });
    rows.push(row);
    list.append(wrap);
    if (value !== undefined) child.set(value);
    return keyInput;
  }
  add.addEventListener("click", () => addRow().focus());
  const node = {
    get() {
      const out = {};
      for (const r of rows) { const k = r.keyInput.value; const v = r.child.get(); if (k !== "" && v !== undefined) out[k] = v; }
      if (!opts.required && !opts.top && Object.keys(out).length === 0) return undefined;
      return out;
    },
    set(v) { rows.splice(0).forEach((r) => r.wrap.remove()); if (v && typeof v === "object") for (const [k, x] of Object.entries(v)) addRow(k, x); },
    validate(errors, needed) { rows.forEach((r) => r.child.validate(errors, needed && r.keyInput.value !== "")); },
    focus: () => (rows.length ? rows[0].keyInput.focus() : add.focus()),
  };
  return { ...node, el: group(ctx, opts, [list, add]) };
}

/** The property every variant fixes with a `const` (a discriminated union), if there is one. */
function discriminator(s, variants) {
  const named = s.discriminator && s.discriminator.propertyName;
  if (named) return named;
  const first = variants[0];
  if (!first.properties) return null;
  return Object.keys(first.properties).find((key) =>
    variants.every((v) => v.properties && v.properties[key] && ("const" in v.properties[key] || (v.properties[key].enum || []).length === 1))) || null;
}

function unionNode(ctx, opts) {
  const { s, root } = opts;
  const raw = s.oneOf || s.anyOf;
  const variants = raw.map((v) => unwrap(v, root).s);
  const disc = discriminator(s, variants);
  const tag = (v) => { const p = v.properties && v.properties[disc]; return p ? ("const" in p ? p.const : p.enum[0]) : undefined; };
  const id = nextId();
  const select = h("select", { id });
  if (!opts.required || opts.nullable) select.append(h("option", { value: "", text: "(not set)" }));
  variants.forEach((v, i) => select.append(h("option", { value: String(i), text: disc ? String(tag(v)) : titleOf(v, v.type ? String(v.type) : `option ${i + 1}`) })));
  const slot = h("div");
  let current = null;
  function choose(i, value) {
    slot.replaceChildren();
    current = null;
    const prefix = opts.path === "" ? "" : `${opts.path}.`;
    for (const key of [...ctx.fields.keys()]) if (key !== `${opts.path}#sel` && key.startsWith(prefix) && key !== opts.path) ctx.fields.delete(key);
    if (i === "" || i === undefined) return;
    const v = variants[Number(i)];
    current = build(ctx, v, { root, path: opts.path, label: disc ? `${opts.label} (${tag(v)})` : `${opts.label} value`, required: true, depth: opts.depth + 1, hideKey: disc, inner: true });
    ctx.fields.set(opts.path, ctx.fields.get(`${opts.path}#sel`));
    slot.append(current.el);
    if (value !== undefined) current.set(value);
  }
  select.addEventListener("change", () => choose(select.value));
  const label = disc ? `${opts.label}: ${disc}` : `${opts.label}: kind`;
  const sel = frame(ctx, { ...opts, label, path: `${opts.path}#sel` }, select, id);
  ctx.fields.set(opts.path, ctx.fields.get(`${opts.path}#sel`));
  const matches = (v, x) => {
    if (disc) return x && typeof x === "object" && x[disc] === tag(v);
    const t = v.type;
    if (t === "object") return x && typeof x === "object" && !Array.isArray(x);
    if (t === "array") return Array.isArray(x);
    if (t === "integer") return Number.isInteger(x);
    if (t === "number") return typeof x === "number";
    if (t === "string" || t === "boolean") return typeof x === t;
    return false;
  };
  const node = {
    get() {
      if (!current) return undefined;
      const v = current.get();
      if (disc && v && typeof v === "object") return { ...v, [disc]: tag(variants[Number(select.value)]) };
      return v;
    },
    set(x) {
      if (x === undefined || x === null) { select.value = select.querySelector('option[value=""]') ? "" : "0"; choose(select.value); return; }
      const i = variants.findIndex((v) => matches(v, x));
      select.value = String(i < 0 ? 0 : i);
      choose(select.value, x);
    },
    validate(errors, needed) {
      if (!current) { if (needed && opts.required) fail(errors, opts.path, "Choose one."); return; }
      current.validate(errors, needed);
    },
    focus: () => select.focus(),
  };
  if (opts.required && !opts.nullable) { select.value = "0"; choose("0"); }
  return { ...node, el: h("div", { class: "union" }, sel, slot) };
}

const join = (base, key) => (base === "" ? key : `${base}.${key}`);

/** One node for `schema` at `path`. */
function build(ctx, schema, opts) {
  const { s, nullable } = unwrap(schema, opts.root);
  const kind = kindOf(s, opts.depth);
  const o = { ...opts, s, nullable, label: opts.label || titleOf(s, "value") };
  let node;
  if (kind === "object") node = objectNode(ctx, o);
  else if (kind === "map") node = mapNode(ctx, o);
  else if (kind === "array") node = arrayNode(ctx, o);
  else if (kind === "union") node = unionNode(ctx, o);
  else if (kind === "enum") node = enumNode(ctx, o);
  else if (kind === "const") node = constNode(ctx, o);
  else if (kind === "json") node = jsonNode(ctx, o, s.type === "object" ? "object" : undefined);
  else node = primitive(ctx, kind, o);
  if (s.default !== undefined && s.default !== null) node.set(s.default);
  if (!opts.required && s.default !== undefined) {
    // an optional field left at its default is not sent: the server applies the same default,
    // and an optional group whose fields are all at their defaults stays out of the arguments
    const get = node.get;
    node.get = () => { const v = get(); return v !== undefined && JSON.stringify(v) === JSON.stringify(s.default) ? undefined : v; };
  }
  return node;
}

/** Normalise a server error's field path (`a.b[0].c`, `/a/b/0`, `("a", 0)`) to `a.b.0.c`. */
export function normalisePath(field) {
  if (Array.isArray(field)) return field.map(String).join(".");
  return String(field ?? "").replace(/\[(\d+)\]/g, ".$1").replace(/^[./]+/, "").replace(/\//g, ".").replace(/\.{2,}/g, ".");
}

/**
 * A form for an object schema. Returns {el, value(), set(v), validate(), showErrors(list), clear()}.
 * `validate()` and `showErrors()` mark the fields, focus the first invalid one and return the
 * errors no field could take.
 */
export function buildForm(schema) {
  const ctx = { fields: new Map() };
  const root = schema || {};
  const top = build(ctx, root, { root, path: "", label: "Arguments", required: true, depth: 0, top: true });
  const unresolved = [];
  function clear() {
    for (const { input, err } of ctx.fields.values()) {
      if (!input) continue;
      input.removeAttribute("aria-invalid");
      if (err) { err.textContent = ""; err.hidden = true; }
    }
  }
  function show(errors) {
    clear();
    unresolved.length = 0;
    const marked = [];
    for (const e of errors) {
      let path = normalisePath(e.path);
      let field = ctx.fields.get(path);
      // a discriminated union's tag sits in the path (`transport.train.coach`): try without it
      const parts = path.split(".");
      for (let i = 1; !field && i < parts.length; i++) {
        const p = [...parts.slice(0, i), ...parts.slice(i + 1)].join(".");
        if (ctx.fields.get(p)) { path = p; field = ctx.fields.get(p); }
      }
      while (!field && path.includes(".")) { path = path.slice(0, path.lastIndexOf(".")); field = ctx.fields.get(path); }
      if (!field || !field.err) { unresolved.push(e); continue; }
      field.input.setAttribute("aria-invalid", "true");
      field.err.hidden = false;
      field.err.textContent = field.err.textContent ? `${field.err.textContent} ${e.message}` : e.message;
      marked.push(field);
    }
    marked.sort((a, b) => (a.input.compareDocumentPosition(b.input) & Node.DOCUMENT_POSITION_FOLLOWING ? -1 : 1));
    if (marked.length) {
      const first = marked[0].input;
      const target = first.tagName === "FIELDSET" ? first.querySelector("input,select,textarea,button") || first : first;
      if (target === first && first.tagName === "FIELDSET") first.tabIndex = -1;
      target.focus();
    }
    return unresolved.slice();
  }
  return {
    el: top.el,
    value: () => top.get() ?? {},
    set: (v) => top.set(v ?? {}),
    validate() { const errors = []; top.validate(errors, true); return errors.length ? { errors, unmapped: show(errors) } : (clear(), null); },
    showErrors: show,
    clear,
    fieldCount: () => ctx.fields.size,
  };
}
