// Copies the dashboard sources and the pinned uPlot build into
// internal/web/assets, which the Go binary embeds. The copies are committed so
// that `go build` and `go install` never need npm; internal/web's tests fail
// when a copy differs from its source here or in node_modules.
import { copyFileSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const out = join(here, "..", "internal", "web", "assets");
const uplot = join(here, "node_modules", "uplot");

rmSync(out, { recursive: true, force: true });
mkdirSync(join(out, "vendor"), { recursive: true });
for (const f of readdirSync(join(here, "src"))) {
  copyFileSync(join(here, "src", f), join(out, f));
}
copyFileSync(join(uplot, "dist", "uPlot.iife.min.js"), join(out, "vendor", "uPlot.iife.min.js"));
copyFileSync(join(uplot, "dist", "uPlot.min.css"), join(out, "vendor", "uPlot.min.css"));
copyFileSync(join(uplot, "LICENSE"), join(out, "vendor", "uPlot.LICENSE"));
console.log("wrote", out);
