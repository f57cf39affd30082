// The KV failure panel: each pool's failed KV transfers by class, as a share
// of the transfers attempted and per second, the prefill work decode did
// itself, the load shed before the engine and the requests a router sent
// again (docs/pools.md), from the pool objects of /api/v1/snapshot. A
// class no source of the pool counts is "—" with the reason as its title,
// never 0%.

import * as f from "./fmt.js";
import { Phases } from "./phases.js";

const POLL_MS = 5000;

// KINDS are the kinds in the order of the API's pool objects.
const KINDS = [
  ["network", "network"],
  ["timeout", "timeout"],
  ["expiry", "lease/request expiry"],
  ["notification", "notification"],
  ["unclassified", "unclassified"],
  ["recomputed_on_decode", "recomputed on decode"],
  ["shed", "shed before the engine"],
  ["migrated", "sent again to another worker"],
];

const why = (obj, key) => (obj && obj.absent && obj.absent[key]) || "not in the response";

function cell(tag, text, title) {
  const el = document.createElement(tag);
  el.textContent = text;
  if (title) el.title = title;
  return el;
}

// kindCell is one kind of one pool: its share, and its rate beneath.
function kindCell(fails, kind) {
  const k = fails && fails[kind];
  const ratio = k ? k.ratio : null;
  const unit = kind === "recomputed_on_decode" ? " tok/s" : "/s";
  if (ratio == null) {
    const c = cell("td", "—", why(fails, kind + ".ratio"));
    c.className = "absent";
    c.dataset.kind = kind;
    return c;
  }
  const of = kind === "recomputed_on_decode" ? "of decode's prompt tokens" : kind === "shed" || kind === "migrated" ? "of the offered load (served + shed)" : "of the KV transfers attempted";
  const c = cell("td", f.pct(ratio), `${f.si(k.per_second)}${unit}, ${f.pct(ratio)} ${of}`);
  c.dataset.kind = kind;
  if (ratio > 0) c.className = "failing";
  return c;
}

// renderFailures fills el from the pools of one /api/v1/snapshot body.
export function renderFailures(el, snap) {
  const pools = (snap && snap.pools) || [];
  const counted = pools.some((p) => p.kv_failures && KINDS.some(([k]) => p.kv_failures[k] && p.kv_failures[k].per_second != null));
  el.replaceChildren();
  el.dataset.counted = counted ? "1" : "";
  if (!counted) {
    el.append(cell("span", "KV failures: no source of any pool counts them", "docs/design.md#kv-failure-classes"));
    el.firstChild.className = "muted";
    return;
  }
  const t = document.createElement("table");
  const head = t.createTHead().insertRow();
  head.append(cell("th", "KV failures"), cell("th", "transfers/s"));
  for (const [, title] of KINDS) head.append(cell("th", title));
  const body = t.createTBody();
  for (const p of pools) {
    const tr = body.insertRow();
    tr.dataset.pool = p.name;
    const fails = p.kv_failures;
    const tps = fails ? fails.transfers_per_second : null;
    tr.append(cell("th", p.name), cell("td", tps == null ? "—" : f.rate(tps), tps == null ? why(fails, "transfers_per_second") : ""));
    for (const [k] of KINDS) tr.append(kindCell(fails, k));
  }
  el.append(t);
}

// startFailures polls the snapshot's pools into a panel after the element
// after (the pools panel, under the charts), and their TTFT phases into
// charts after it.
export function startFailures(after, paused) {
  const el = document.createElement("section");
  el.id = "failures";
  el.className = "failures";
  el.title = "docs/pools.md";
  const ph = document.createElement("section");
  ph.id = "ttft-phases";
  ph.className = "phases";
  ph.hidden = true;
  after.after(el, ph);
  const phases = new Phases(ph);
  const tick = async () => {
    if (!paused()) {
      try {
        const r = await fetch("/api/v1/snapshot?instances=0");
        if (r.ok) {
          const snap = await r.json();
          renderFailures(el, snap);
          // On the points' clock: a replay's is the recording's, not now.
          const t = snap.point ? Date.parse(snap.point.time) / 1000 : Date.now() / 1000;
          phases.add(t, snap.pools);
        }
      } catch (e) {
        // The next poll tries again; the stream's badge says when the
        // server is gone.
      }
    }
    setTimeout(tick, POLL_MS);
  };
  tick();
  return el;
}
