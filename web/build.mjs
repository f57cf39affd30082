// Copies the pinned uPlot build from node_modules into
// internal/web/assets/vendor, which the Go binary embeds next to the page's
// own sources (internal/web/assets). The copies are committed so that
// `go build` and `go install` never need npm; internal/web's tests fail when
// a copy differs from node_modules after `npm ci`.
import { copyFileSync, mkdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, "..", "internal", "web", "assets", "vendor");
const uplot = join(here, "node_modules", "uplot");

mkdirSync(out, { recursive: true });
copyFileSync(join(uplot, "dist", "uPlot.iife.min.js"), join(out, "uPlot.iife.min.js"));
copyFileSync(join(uplot, "dist", "uPlot.min.css"), join(out, "uPlot.min.css"));
copyFileSync(join(uplot, "LICENSE"), join(out, "uPlot.LICENSE"));
console.log("wrote", out);
