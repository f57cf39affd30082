// Number formatting shared by the charts, the big numbers and the table.

const SI = [[1e12, "T"], [1e9, "G"], [1e6, "M"], [1e3, "k"]];

// si writes 3 significant digits with an SI prefix: 12.3k, 4.56G.
export function si(v, unit = "") {
  if (v == null || !isFinite(v)) return "—";
  const a = Math.abs(v);
  for (const [f, p] of SI) {
    if (a >= f) return trim(v / f) + p + unit;
  }
  return trim(v) + unit;
}

function trim(v) {
  const a = Math.abs(v);
  if (a === 0) return "0";
  if (a >= 100) return v.toFixed(0);
  if (a >= 10) return v.toFixed(1);
  if (a >= 1) return v.toFixed(2);
  return v.toPrecision(2);
}

// rate keeps two decimals below 10 req/s so that a column of rates lines up.
export const rate = (v) => {
  if (v == null || !isFinite(v)) return "—";
  const a = Math.abs(v);
  return v.toFixed(a < 10 ? 2 : a < 100 ? 1 : 0);
};
export const count = (v) => (v == null ? "—" : Math.round(v).toString());
export const pct = (v) => (v == null ? "—" : (v * 100).toFixed(v >= 0.995 || v === 0 ? 0 : 1) + "%");
export const bytesPerSec = (v) => (v == null ? "—" : si(v, "B/s"));

// bytes writes binary units: B_request is a power-of-two-ish size.
export function bytes(v) {
  if (v == null || !(v > 0)) return "—";
  const u = ["B", "KiB", "MiB", "GiB", "TiB"];
  let i = 0;
  while (v >= 1024 && i < u.length - 1) { v /= 1024; i++; }
  return trim(v) + " " + u[i];
}

// secs writes a latency: ms below one second.
export function secs(v) {
  if (v == null || !isFinite(v)) return "—";
  if (Math.abs(v) < 1) return trim(v * 1000) + " ms";
  return trim(v) + " s";
}

export function clock(tSec) {
  const d = new Date(tSec * 1000);
  return d.toLocaleTimeString([], { hour12: false });
}
