// Parse Mermaid blocks (a JSON list of strings on stdin) with Mermaid's own parser, headless:
// jsdom provides the DOM that mermaid expects. Prints a JSON list of {ok, type|error}.
import { JSDOM } from "jsdom";
import { readFileSync } from "node:fs";
const dom = new JSDOM("<!doctype html><html><body></body></html>");
globalThis.window = dom.window;
globalThis.document = dom.window.document;
globalThis.DOMPurify = undefined;
const { default: mermaid } = await import("mermaid");
mermaid.initialize({ startOnLoad: false });
const blocks = JSON.parse(readFileSync(0, "utf8"));
const out = [];
for (const text of blocks) {
  try {
    const r = await mermaid.parse(text);
    out.push({ ok: true, type: r.diagramType });
  } catch (e) {
    out.push({ ok: false, error: String(e.message || e).split("\n").slice(0, 3).join(" ") });
  }
}
process.stdout.write(JSON.stringify(out));
