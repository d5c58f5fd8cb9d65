/* dvppd console: polls GET /v1/stats every second and draws it; "Try it"
 * runs one image through /v1/preprocess and /v1/image and shows what came
 * back. Plain JS, no framework, nothing loaded from elsewhere (the CSP
 * allows only this daemon). Exposed for tests and curious operators as
 * window.dvppConsole (series, last stats, last tensor). */
"use strict";

(function () {
  const POLL_MS = 1000;
  const KEEP = 120;                 /* points per chart series: two minutes */
  const ENGINE_COLORS = ["#2f6fdf", "#d9822b", "#2ca58d", "#8a4fdf", "#c8322f", "#6b7a8f", "#b8a200"];

  const $ = (id) => document.getElementById(id);
  const state = {
    prev: null,                     /* the previous /v1/stats */
    stats: null,
    info: null,
    presets: [],
    series: {
      t: [],                        /* seconds since the page started */
      reqps: [], imgps: [], p50ms: [], p99ms: [],
      queue: {}, busy: {},          /* engine -> values */
    },
    rejectRates: {},
    tensor: null,                   /* the last Try-it result */
    polls: 0,
    traceOk: true,                  /* ?trace=1 accepted (off after a 400 naming it) */
  };
  window.dvppConsole = state;

  /* --- small helpers ------------------------------------------------------ */

  function el(tag, text, cls) {
    const e = document.createElement(tag);
    if (text !== undefined && text !== null) e.textContent = String(text);
    if (cls) e.className = cls;
    return e;
  }

  function fillRows(tbody, rows) {
    tbody.replaceChildren(...rows.map((cells) => {
      const tr = el("tr");
      for (const c of cells) {
        const td = el("td", c);
        if (typeof c === "number") td.className = "num";
        tr.appendChild(td);
      }
      return tr;
    }));
  }

  function kv(tbody, pairs) {
    fillRows(tbody, pairs);
  }

  function fmt(x, digits) {
    if (!isFinite(x)) return String(x);
    const a = Math.abs(x);
    if (a !== 0 && (a < 1e-3 || a >= 1e6)) return x.toExponential(digits === undefined ? 3 : digits);
    return x.toFixed(digits === undefined ? (a >= 100 ? 0 : a >= 10 ? 1 : 2) : digits);
  }

  async function getJSON(path) {
    const r = await fetch(path, { cache: "no-store" });
    if (!r.ok) throw new Error(path + ": HTTP " + r.status);
    return r.json();
  }

  async function errorText(r) {
    try {
      const j = await r.json();
      if (j && j.error) return `${r.status} ${j.error.code}: ${j.error.message}` +
        (j.error.field ? ` (field ${j.error.field})` : "");
    } catch (e) { /* not JSON */ }
    return `HTTP ${r.status}`;
  }

  /* --- charts: lines on a canvas ------------------------------------------- */

  function fitCanvas(c) {
    const dpr = window.devicePixelRatio || 1;
    const w = Math.max(200, Math.round(c.clientWidth || c.width));
    const h = Math.max(60, Math.round(c.clientHeight || c.height));
    if (c.width !== w * dpr || c.height !== h * dpr) {
      c.width = w * dpr;
      c.height = h * dpr;
    }
    const g = c.getContext("2d");
    g.setTransform(dpr, 0, 0, dpr, 0, 0);
    return { g, w, h };
  }

  function niceMax(v) {
    if (!(v > 0)) return 1;
    const p = Math.pow(10, Math.floor(Math.log10(v)));
    for (const m of [1, 2, 2.5, 5, 10]) if (v <= m * p) return m * p;
    return 10 * p;
  }

  /* lines: [{name, color, values}] over the shared x (state.series.t). */
  function drawChart(canvas, lines, unit) {
    const { g, w, h } = fitCanvas(canvas);
    const L = 48, R = 8, T = 8;
    const t = state.series.t;
    g.font = "11px system-ui, sans-serif";
    /* the legend's entries, wrapped into rows under the plot */
    const items = lines.map((ln) => {
      const last = ln.values.length ? ln.values[ln.values.length - 1] : 0;
      const label = `${ln.name} ${fmt(last)}`;
      return { ln, label, width: g.measureText(label).width + 26 };
    });
    let rows = 1, rx = L;
    for (const it of items) {
      if (rx + it.width > w - R && rx > L) { rows++; rx = L; }
      it.row = rows - 1; it.x = rx; rx += it.width;
    }
    const B = 20 + 14 * rows;
    let ymax = 0;
    for (const ln of lines) for (const v of ln.values) if (v > ymax) ymax = v;
    ymax = niceMax(ymax * 1.1);
    g.clearRect(0, 0, w, h);
    g.font = "11px system-ui, sans-serif";
    g.strokeStyle = "#d9dee7";
    g.fillStyle = "#667085";
    g.lineWidth = 1;
    for (let i = 0; i <= 4; i++) {
      const y = T + (h - T - B) * (1 - i / 4);
      g.beginPath(); g.moveTo(L, y + 0.5); g.lineTo(w - R, y + 0.5); g.stroke();
      g.textAlign = "right"; g.textBaseline = "middle";
      g.fillText(fmt(ymax * i / 4) + (i === 4 && unit ? " " + unit : ""), L - 4, y);
    }
    const n = t.length;
    const t0 = n ? t[0] : 0, t1 = n ? Math.max(t[n - 1], t0 + 1) : 1;
    const xOf = (x) => L + (w - L - R) * (x - t0) / (t1 - t0);
    const yOf = (v) => T + (h - T - B) * (1 - v / ymax);
    g.textAlign = "center"; g.textBaseline = "top";
    g.fillText(`${Math.round(t1 - t0)} s`, (L + w - R) / 2, h - B + 3);
    for (const ln of lines) {
      g.strokeStyle = ln.color; g.lineWidth = 1.8;
      g.beginPath();
      ln.values.forEach((v, i) => {
        const x = xOf(t[i]), y = yOf(v);
        if (i) g.lineTo(x, y); else g.moveTo(x, y);
      });
      g.stroke();
    }
    g.textAlign = "left"; g.textBaseline = "bottom";
    for (const it of items) {
      const y = h - 3 - 14 * (rows - 1 - it.row);
      g.fillStyle = it.ln.color;
      g.fillRect(it.x, y - 9, 10, 3);
      g.fillStyle = "#1c2330";
      g.fillText(it.label, it.x + 13, y);
    }
  }

  /* --- stats ------------------------------------------------------------- */

  const WORK_ROUTES = ["preprocess", "image", "decode", "batch", "jobs", "video_decode",
                       "video_encode"];

  /* Quantile of bucket counts (upper bounds @bounds, last bucket +Inf), as
   * dvppd_hist_quantile computes it: linear inside the bucket. */
  function quantile(buckets, bounds, q) {
    const total = buckets.reduce((a, b) => a + b, 0);
    if (!total) return 0;
    const rank = q * total;
    let cum = 0;
    for (let b = 0; b < buckets.length; b++) {
      const lo = b ? bounds[b - 1] : 0;
      if (!buckets[b] || cum + buckets[b] < rank) { cum += buckets[b]; continue; }
      if (b >= bounds.length) return lo;
      return lo + (bounds[b] - lo) * (rank - cum) / buckets[b];
    }
    return bounds[bounds.length - 1];
  }

  /* The work routes' histogram of the last poll interval. */
  function windowBuckets(cur, prev) {
    const n = cur.latency.bounds_s.length + 1;
    const out = new Array(n).fill(0);
    for (const r of WORK_ROUTES) {
      const c = cur.latency.routes[r];
      if (!c) continue;
      const p = prev && prev.latency.routes[r];
      for (let i = 0; i < n; i++) out[i] += c.buckets[i] - (p ? p.buckets[i] : 0);
    }
    return out;
  }

  function push(arr, v) {
    arr.push(v);
    if (arr.length > KEEP) arr.shift();
  }

  function takeStats(s) {
    const prev = state.prev;
    const S = state.series;
    const dt = prev ? Math.max(0.001, (s.mono_ms - prev.mono_ms) / 1000) : 1;
    const rate = (f) => (prev ? Math.max(0, (f(s) - f(prev)) / dt) : 0);
    push(S.t, s.mono_ms / 1000);
    push(S.reqps, rate((x) => x.throughput.requests));
    push(S.imgps, rate((x) => x.throughput.images));
    const wb = windowBuckets(s, prev);
    push(S.p50ms, quantile(wb, s.latency.bounds_s, 0.5) * 1000);
    push(S.p99ms, quantile(wb, s.latency.bounds_s, 0.99) * 1000);
    for (const e of s.engines) {
      if (!S.queue[e.name]) {
        /* a new series starts at the shared x's length, zero-filled */
        S.queue[e.name] = new Array(S.t.length - 1).fill(0);
        S.busy[e.name] = new Array(S.t.length - 1).fill(0);
      }
      push(S.queue[e.name], e.queued);
      push(S.busy[e.name], e.busy);
    }
    state.rejectRates = {};
    for (const [k, v] of Object.entries(s.rejections))
      state.rejectRates[k] = prev && prev.rejections[k] !== undefined ? (v - prev.rejections[k]) / dt : 0;
    state.prev = s;
    state.stats = s;
    state.polls++;
  }

  function render() {
    const s = state.stats, S = state.series;
    if (!s) return;
    $("b-version").textContent = s.version;
    $("b-simd").textContent = s.simd;
    $("b-jpeg").textContent = s.jpeg;
    $("b-generation").textContent = s.config.generation;
    $("b-reloads").textContent = `${s.config.reloads_ok} ok, ${s.config.reloads_failed} failed`;
    const last = (a) => (a.length ? a[a.length - 1] : 0);
    $("now-throughput").textContent =
      `${fmt(last(S.reqps))} req/s, ${fmt(last(S.imgps))} images/s, ` +
      `${s.throughput.requests} requests in all`;
    $("now-throughput").dataset.reqps = String(last(S.reqps));
    $("now-throughput").dataset.requests = String(s.throughput.requests);
    $("now-latency").textContent = `p50 ${fmt(last(S.p50ms))} ms, p99 ${fmt(last(S.p99ms))} ms`;
    drawChart($("chart-throughput"), [
      { name: "req/s", color: "#2f6fdf", values: S.reqps },
      { name: "images/s", color: "#2ca58d", values: S.imgps },
    ], "/s");
    drawChart($("chart-latency"), [
      { name: "p50 ms", color: "#2f6fdf", values: S.p50ms },
      { name: "p99 ms", color: "#c8322f", values: S.p99ms },
    ], "ms");
    const engLines = (m) => s.engines.map((e, i) => ({
      name: e.name, color: ENGINE_COLORS[i % ENGINE_COLORS.length], values: m[e.name] }));
    drawChart($("chart-queue"), engLines(S.queue), "");
    drawChart($("chart-busy"), engLines(S.busy), "");

    fillRows($("t-engines").tBodies[0], s.engines.map((e) => [
      e.name, e.channels, e.busy, e.queued, e.queue_capacity, e.done, e.failed, e.canceled,
      e.timedout]));
    kv($("t-http").tBodies[0], [
      ["in flight", s.http.inflight], ["waiting on a job", s.http.suspended],
      ["result bytes alive", s.http.result_bytes], ["body bytes reserved", s.http.body_bytes],
      ["device: pixels in flight", s.device.inflight_pixels],
      ["device: bytes in flight", s.device.inflight_bytes],
      ["images decoded", s.throughput.images], ["pixels out", s.throughput.pixels],
    ]);
    const k = s.socket;
    kv($("t-socket").tBodies[0], k.enabled ? [
      ["socket", k.path || "(passed by systemd)"],
      ["connections open", k.connections], ["rings open", k.rings],
      ["ring slots", k.slots], ["slots in use (leased)", k.slots_leased],
      ["connections since start", k.connections_total], ["jobs submitted", k.submitted],
      ["jobs failed", k.failed], ["leases expired", k.leases_expired],
      ["bad releases", k.bad_releases], ["connections dropped", k.dropped_connections],
      ["peers refused", k.refused_peers],
    ] : [["socket", "off (socket.path is empty)"]]);
    fillRows($("t-rejections").tBodies[0], Object.entries(s.rejections).map(([r, n]) =>
      [r, n, fmt(state.rejectRates[r] || 0)]));
    $("errors-total").textContent = `${s.throughput.errors} since start, last ${s.errors.length}`;
    fillRows($("t-errors").tBodies[0], s.errors.map((e) => [
      new Date(e.time_ms).toLocaleTimeString(), e.route, e.status, e.code, e.field, e.message]));
    for (const td of $("t-errors").querySelectorAll("td:last-child")) td.className = "msg";
  }

  async function poll() {
    const st = $("poll-status");
    try {
      takeStats(await getJSON("/v1/stats"));
      render();
      st.textContent = `live, every ${POLL_MS / 1000} s`;
      st.className = "status";
    } catch (e) {
      st.textContent = "stats unavailable: " + e.message;
      st.className = "status bad";
    }
    setTimeout(poll, POLL_MS);
  }

  async function loadInfo() {
    try {
      state.info = await getJSON("/v1/info");
      $("b-codecs").textContent = (state.info.codecs || []).join(", ");
    } catch (e) {
      $("b-codecs").textContent = "?";
    }
  }

  /* --- presets ------------------------------------------------------------- */

  async function loadPresets() {
    let list = [];
    try {
      list = (await getJSON("/v1/presets")).presets || [];
    } catch (e) {
      $("preset-desc").textContent = "no presets on this daemon (" + e.message + ")";
    }
    /* Only presets for tensors: Try it runs /v1/preprocess. */
    state.presets = list.filter((p) => !p.kind || p.kind === "tensor");
    const sel = $("preset");
    for (const p of state.presets) {
      const o = el("option", `${p.name} (${p.source})`);
      o.value = p.name;
      sel.appendChild(o);
    }
    sel.addEventListener("change", () => {
      const p = state.presets.find((x) => x.name === sel.value);
      $("preset-desc").textContent = p ? p.description || "" : "";
      if (p) $("spec").value = JSON.stringify(p.spec, null, 2);
    });
  }

  /* The preset chosen, when the spec is still exactly its spec. */
  function presetInUse(spec) {
    const p = state.presets.find((x) => x.name === $("preset").value);
    return p && JSON.stringify(p.spec) === JSON.stringify(spec) ? p.name : null;
  }

  /* --- .npy ------------------------------------------------------------------ */

  function f16ToF32(h) {
    const s = h & 0x8000 ? -1 : 1, e = (h >> 10) & 0x1f, f = h & 0x3ff;
    if (e === 0) return s * Math.pow(2, -14) * (f / 1024);
    if (e === 31) return f ? NaN : s * Infinity;
    return s * Math.pow(2, e - 15) * (1 + f / 1024);
  }

  /* A .npy v1/v2/v3 file: {descr, shape, values (a typed array or, for f16,
   * a Float32Array of the converted values)}. */
  function parseNpy(buf) {
    const u8 = new Uint8Array(buf);
    if (u8.length < 10 || u8[0] !== 0x93 || String.fromCharCode(...u8.slice(1, 6)) !== "NUMPY")
      throw new Error("not a .npy answer");
    const major = u8[6];
    const dv = new DataView(buf);
    const hlen = major === 1 ? dv.getUint16(8, true) : dv.getUint32(8, true);
    const hstart = major === 1 ? 10 : 12;
    const header = new TextDecoder("latin1").decode(u8.slice(hstart, hstart + hlen));
    const descr = /'descr'\s*:\s*'([^']+)'/.exec(header)[1];
    if (/'fortran_order'\s*:\s*True/.test(header)) throw new Error("fortran_order .npy");
    const shape = /'shape'\s*:\s*\(([^)]*)\)/.exec(header)[1].split(",")
      .map((x) => x.trim()).filter((x) => x).map(Number);
    const off = hstart + hlen;
    const n = shape.reduce((a, b) => a * b, 1);
    const data = buf.slice(off, off + n * parseInt(descr.slice(2), 10));
    let values;
    switch (descr) {
      case "<f4": values = new Float32Array(data); break;
      case "<f2": {
        const h = new Uint16Array(data);
        values = new Float32Array(n);
        for (let i = 0; i < n; i++) values[i] = f16ToF32(h[i]);
        break;
      }
      case "|u1": values = new Uint8Array(data); break;
      case "|i1": values = new Int8Array(data); break;
      case "<u2": values = new Uint16Array(data); break;
      case "<i2": values = new Int16Array(data); break;
      case "<i4": values = new Int32Array(data); break;
      case "<f8": values = new Float64Array(data); break;
      default: throw new Error("unsupported dtype " + descr);
    }
    return { descr, shape, values };
  }

  /* Per-channel min/max/mean/std (population) over a tensor in @layout
   * (NCHW, NHWC, NC1HWC0), in float64. */
  function channelStats(t, layout) {
    const s = t.shape, v = t.values;
    let C, chanOf;
    if (layout === "NCHW" && s.length === 4) {
      C = s[1];
      const hw = s[2] * s[3];
      chanOf = (i) => Math.floor(i / hw) % C;
    } else if (layout === "NHWC" && s.length === 4) {
      C = s[3];
      chanOf = (i) => i % C;
    } else if (layout === "NC1HWC0" && s.length === 5) {
      const C0 = s[4], hw = s[2] * s[3];
      C = s[1] * C0;
      chanOf = (i) => (Math.floor(i / (hw * C0)) % s[1]) * C0 + (i % C0);
    } else {
      C = 1;
      chanOf = () => 0;
    }
    const st = [];
    for (let c = 0; c < C; c++) st.push({ n: 0, min: Infinity, max: -Infinity, sum: 0 });
    for (let i = 0; i < v.length; i++) {
      const x = v[i], k = st[chanOf(i)];
      k.n++; k.sum += x;
      if (x < k.min) k.min = x;
      if (x > k.max) k.max = x;
    }
    for (const k of st) { k.mean = k.n ? k.sum / k.n : 0; k.ss = 0; }
    for (let i = 0; i < v.length; i++) {
      const k = st[chanOf(i)], d = v[i] - k.mean;
      k.ss += d * d;
    }
    return st.map((k, c) => ({ channel: c, min: k.min, max: k.max, mean: k.mean,
                               std: k.n ? Math.sqrt(k.ss / k.n) : 0 }));
  }

  /* --- Try it ---------------------------------------------------------------- */

  function pickFile(f) {
    state.file = f;
    $("drop-text").textContent = f ? `${f.name} (${f.size} bytes)` : "drop an image here, or pick one";
    $("run").disabled = !f;
  }

  function shellQuote(s) {
    return "'" + String(s).replace(/'/g, "'\\''") + "'";
  }

  function parsePair(h) {
    if (!h) return null;
    const p = h.split(",").map(Number);
    return p.length === 2 && p.every(isFinite) ? p : null;
  }

  function parseTiming(h) {
    const out = [];
    for (const part of (h || "").split(";")) {
      const [k, v] = part.split("=");
      if (k && v !== undefined && isFinite(Number(v))) out.push([k.trim(), Number(v)]);
    }
    return out;
  }

  /* The spec of the image before normalisation: the same decode and ops,
   * no normalize/aipp, a PNG out, and no shrink-on-load (which /v1/image
   * would do by default and /v1/preprocess does not). */
  function previewSpec(spec) {
    const p = {};
    for (const k of ["input", "raw", "ops"]) if (spec[k] !== undefined) p[k] = spec[k];
    p.decode = Object.assign({}, spec.decode || {}, { shrink_on_load: false });
    delete p.decode.format; /* the preview is RGB */
    p.output = { format: "png" };
    return p;
  }

  async function postImage(spec) {
    const r = await fetch("/v1/image", {
      method: "POST", body: state.file, cache: "no-store",
      headers: { "X-Dvpp-Spec": JSON.stringify(spec) },
    });
    if (!r.ok) throw new Error(await errorText(r));
    const blob = await r.blob();
    const bmp = await createImageBitmap(blob);
    return { r, bmp };
  }

  function drawImage(canvas, bmp) {
    canvas.width = bmp.width;
    canvas.height = bmp.height;
    const g = canvas.getContext("2d");
    g.drawImage(bmp, 0, 0);
    return g;
  }

  /* The outline of where the picture lies in the output: source = (out - pad) / scale,
   * so the content rectangle is [pad, pad + src * scale]. */
  function drawGeometry(g, w, h, scale, pad, src) {
    if (!scale || !pad || !src) return "";
    const x0 = pad[0], y0 = pad[1];
    const x1 = x0 + src[0] * scale[0], y1 = y0 + src[1] * scale[1];
    const L = Math.max(0, Math.min(x0, x1)), R = Math.min(w, Math.max(x0, x1));
    const T = Math.max(0, Math.min(y0, y1)), B = Math.min(h, Math.max(y0, y1));
    g.save();
    g.strokeStyle = "#ff2d55";
    g.lineWidth = Math.max(2, Math.round(w / 200));
    g.setLineDash([8, 5]);
    g.strokeRect(L + 0.5, T + 0.5, Math.max(0, R - L - 1), Math.max(0, B - T - 1));
    g.restore();
    return `content ${fmt(R - L, 1)} x ${fmt(B - T, 1)} at (${fmt(L, 1)}, ${fmt(T, 1)}); ` +
      `scale ${scale.map((x) => fmt(x, 4)).join(", ")}, pad ${pad.map((x) => fmt(x, 2)).join(", ")}`;
  }

  function drawTiming(stages) {
    const c = $("timing-bar");
    const { g, w, h } = fitCanvas(c);
    const parts = stages.filter(([k]) => k !== "total");
    const total = stages.find(([k]) => k === "total");
    const sum = parts.reduce((a, [, v]) => a + v, 0) || 1;
    const full = Math.max(sum, total ? total[1] : 0);
    g.clearRect(0, 0, w, h);
    let x = 0;
    const legend = [];
    parts.forEach(([k, v], i) => {
      const bw = (w - 2) * v / full;
      g.fillStyle = ENGINE_COLORS[i % ENGINE_COLORS.length];
      g.fillRect(1 + x, 8, bw, h - 24);
      x += bw;
      legend.push(`${k} ${v}`);
    });
    g.strokeStyle = "#1c2330";
    g.strokeRect(0.5, 7.5, w - 1, h - 22);
    g.fillStyle = "#1c2330";
    g.font = "11px system-ui, sans-serif";
    g.textBaseline = "bottom";
    g.fillText(total ? `total ${total[1]} µs` : "", 2, h - 1);
    $("timing-legend").replaceChildren(...parts.map(([k, v], i) => {
      const s = el("span", `■ ${k} ${v} µs  `);
      s.style.color = ENGINE_COLORS[i % ENGINE_COLORS.length];
      return s;
    }));
    return legend;
  }

  /* A preset is named as it is (--preset: dvppctl resolves the shipped ones,
   * the daemon behind --socket its config's too); otherwise dvppctl
   * preprocess takes one resize (and a crop before it) and the
   * normalisation as flags; a spec it cannot say gets no command. */
  function dvppctlCommand(spec, file, socket, preset) {
    const args = ["dvppctl", "preprocess", shellQuote(file)];
    if (preset) {
      args.push("--preset", shellQuote(preset));
      if (socket) args.push("--socket", shellQuote(socket));
      args.push("-o", "out.npy");
      return args.join(" ");
    }
    const ops = spec.ops || [];
    const why = [];
    let resize = null, crop = null;
    for (const op of ops) {
      if (op.resize && !resize) resize = op.resize;
      else if (op.crop && !crop && !resize) crop = op.crop;
      else why.push("more ops than one crop and one resize");
    }
    for (const k of Object.keys(spec))
      if (!["ops", "normalize"].includes(k)) why.push(`"${k}"`);
    if (!resize) why.push("no resize (--size is required)");
    const n = spec.normalize || {};
    if (n.scale !== undefined || n.channels !== undefined) why.push("normalize.scale/channels");
    if (why.length)
      return `# no dvppctl equivalent: ${[...new Set(why)].join(", ")}; use the curl command`;
    if (crop) args.push("--roi", crop.join(","));
    const mode = resize.mode || "stretch";
    args.push("--size", resize.h !== undefined ? `${resize.w}x${resize.h}` : String(resize.w));
    args.push("--mode", mode);
    if (resize.interp) args.push("--interp", resize.interp);
    if (resize.round) args.push("--round", resize.round);
    if (resize.parity) args.push("--parity", resize.parity);
    if (resize.ascend_mode !== undefined) args.push("--ascend-mode", String(resize.ascend_mode));
    if (resize.pad) args.push("--pad", resize.pad.map((x) => x.toString(16).padStart(2, "0")).join(""));
    const list = (v) => (Array.isArray(v) ? v.join(",") : String(v));
    if (n.mean !== undefined) args.push("--mean", list(n.mean));
    if (n.std !== undefined) args.push("--std", list(n.std));
    if (n.order) args.push("--order", n.order);
    if (n.layout) args.push("--layout", n.layout);
    if (n.dtype) args.push("--dtype", { float32: "f32", float16: "f16", uint8: "u8", int8: "i8" }[n.dtype] || n.dtype);
    if (socket) args.push("--socket", shellQuote(socket));
    args.push("-o", "out.npy");
    return args.join(" ");
  }

  async function run() {
    const status = $("run-status");
    let spec;
    try {
      spec = JSON.parse($("spec").value);
    } catch (e) {
      status.textContent = "the spec is not JSON: " + e.message;
      status.className = "run-status bad";
      return;
    }
    const preset = presetInUse(spec);
    status.textContent = "running…";
    status.className = "run-status";
    $("run").disabled = true;
    try {
      const q = new URLSearchParams();
      if (preset) q.set("preset", preset);
      const headers = preset ? {} : { "X-Dvpp-Spec": JSON.stringify(spec) };
      let r;
      for (;;) {
        const qq = new URLSearchParams(q);
        if (state.traceOk) qq.set("trace", "1");
        const qs = qq.toString();
        r = await fetch("/v1/preprocess" + (qs ? "?" + qs : ""), {
          method: "POST", body: state.file, headers, cache: "no-store" });
        if (r.status === 400 && state.traceOk) {
          const t = await r.clone().json().catch(() => null);
          if (t && t.error && /trace/.test(t.error.field || "")) { state.traceOk = false; continue; }
        }
        break;
      }
      if (!r.ok) throw new Error(await errorText(r));
      const buf = await r.arrayBuffer();
      const t = parseNpy(buf);
      const layout = (r.headers.get("X-Dvpp-Layout") || "").toUpperCase();
      const stats = channelStats(t, layout);
      const scale = parsePair(r.headers.get("X-Dvpp-Scale"));
      const pad = parsePair(r.headers.get("X-Dvpp-Pad"));
      const timing = parseTiming(r.headers.get("X-Dvpp-Timing"));
      state.tensor = { shape: t.shape, descr: t.descr, layout, stats, scale, pad, timing,
                       header_shape: r.headers.get("X-Dvpp-Shape"),
                       dtype: r.headers.get("X-Dvpp-Dtype"), preset, spec };
      $("result").hidden = false;
      $("tensor-shape").textContent = r.headers.get("X-Dvpp-Shape") || t.shape.join(",");
      $("tensor-dtype").textContent = r.headers.get("X-Dvpp-Dtype") || t.descr;
      $("tensor-layout").textContent = layout;
      $("tensor-bytes").textContent = String(buf.byteLength);
      const tid = r.headers.get("X-Dvpp-Trace-Id");
      const tlink = r.headers.get("X-Dvpp-Trace");
      $("tensor-trace").replaceChildren(tid ? Object.assign(el("a", `trace ${tid}`),
        { href: tlink || `/v1/traces/${tid}` }) : el("span", "—"));
      fillRows($("tensor-stats").tBodies[0], stats.map((k) => [
        String(k.channel), k.min.toPrecision(8), k.max.toPrecision(8), k.mean.toPrecision(8),
        k.std.toPrecision(8)]));
      drawTiming(timing);
      const base = location.origin;
      const name = state.file.name || "photo.jpg";
      $("cmd-curl").textContent = preset
        ? `curl -s --data-binary @${shellQuote(name)} -o out.npy ${shellQuote(base + "/v1/preprocess?preset=" + encodeURIComponent(preset))}`
        : `curl -s --data-binary @${shellQuote(name)} -o out.npy -H ${shellQuote("X-Dvpp-Spec: " + JSON.stringify(spec))} ${shellQuote(base + "/v1/preprocess")}`;
      const sock = state.stats && state.stats.socket && state.stats.socket.path;
      $("cmd-dvppctl").textContent = dvppctlCommand(spec, name, sock, preset);
      status.textContent = "done";
      /* The pictures: the decode alone, then the geometry without normalisation. */
      const dec = await postImage({ decode: { shrink_on_load: false }, output: { format: "png" } });
      drawImage($("img-decoded"), dec.bmp);
      $("decoded-size").textContent = `${dec.bmp.width} x ${dec.bmp.height}`;
      const pspec = previewSpec(preset ? state.presets.find((p) => p.name === preset).spec : spec);
      try {
        const pv = await postImage(pspec);
        const g = drawImage($("img-preview"), pv.bmp);
        $("preview-size").textContent = `${pv.bmp.width} x ${pv.bmp.height}`;
        $("preview-geometry").textContent = drawGeometry(g, pv.bmp.width, pv.bmp.height,
          scale, pad, [dec.bmp.width, dec.bmp.height]);
      } catch (e) {
        $("preview-geometry").textContent = "no preview: " + e.message;
      }
      state.tensor.done = true;
      status.textContent = "done";
    } catch (e) {
      status.textContent = e.message;
      status.className = "run-status bad";
      state.tensor = { error: e.message };
    } finally {
      $("run").disabled = !state.file;
    }
  }

  function setupTryIt() {
    const drop = $("drop"), file = $("file");
    file.addEventListener("change", () => pickFile(file.files[0] || null));
    drop.addEventListener("dragover", (e) => { e.preventDefault(); drop.classList.add("over"); });
    drop.addEventListener("dragleave", () => drop.classList.remove("over"));
    drop.addEventListener("drop", (e) => {
      e.preventDefault();
      drop.classList.remove("over");
      if (e.dataTransfer.files.length) pickFile(e.dataTransfer.files[0]);
    });
    $("run").addEventListener("click", run);
  }

  setupTryIt();
  loadInfo();
  loadPresets();
  poll();
  window.addEventListener("resize", render);
})();
