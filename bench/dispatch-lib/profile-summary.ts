/**
 * Summarises V8 .cpuprofile files (node --cpu-prof): self time per function and per source area,
 * so a profile of the worker reads as "where the time goes" without opening DevTools.
 *
 *   node --import tsx bench/dispatch-lib/profile-summary.ts bench/.data/prof-dispatch/*.cpuprofile
 */
import { readFile } from "node:fs/promises";

interface CpuNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
  children?: number[];
}
interface CpuProfile {
  nodes: CpuNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Where a frame's code lives: our source by folder, a dependency by package, else node or V8. */
function area(url: string, name: string): string {
  if (!url) return name.startsWith("(") ? name : "(native/V8)";
  const dep = url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/);
  if (dep) return `dep:${dep[1]}`;
  const ours = url.match(/\/(src\/[^/]+|carriers|bench)\//);
  if (ours) return ours[1] as string;
  if (url.startsWith("node:")) return `node:${url.slice(5).split("/")[0]}`;
  return "other";
}

export async function summarise(file: string, top = 25): Promise<string> {
  const p = JSON.parse(await readFile(file, "utf8")) as CpuProfile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  for (const [i, id] of p.samples.entries()) self.set(id, (self.get(id) ?? 0) + (p.timeDeltas[i] ?? 0));
  const total = (p.endTime - p.startTime) / 1000;
  const fn = new Map<string, number>();
  const areas = new Map<string, number>();
  for (const [id, us] of self) {
    const n = byId.get(id);
    if (!n) continue;
    const { functionName, url, lineNumber } = n.callFrame;
    const key = `${functionName || "(anonymous)"} ${url.replace(/^.*\/(node_modules|src|carriers|bench)\//, "$1/")}:${lineNumber + 1}`;
    fn.set(key, (fn.get(key) ?? 0) + us / 1000);
    const a = area(url, functionName);
    areas.set(a, (areas.get(a) ?? 0) + us / 1000);
  }
  // Inclusive by our module: each sample goes to the deepest frame of src/ on its stack, so the
  // library and node work a module sets off counts as that module's (GC and idle stay apart).
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const modules = new Map<string, number>();
  for (const [id, us] of self) {
    let owner = byId.get(id)?.callFrame.functionName ?? "?";
    if (!owner.startsWith("(")) owner = "(outside src/)";
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const mine = byId.get(at)?.callFrame.url.match(/\/(src\/.+)$/);
      if (mine) {
        owner = mine[1] as string;
        break;
      }
    }
    modules.set(owner, (modules.get(owner) ?? 0) + us / 1000);
  }
  const busy = [...areas.entries()].filter(([a]) => a !== "(idle)").reduce((s, [, ms]) => s + ms, 0);
  const lines = [
    `${file}: ${Math.round(total)} ms profiled, ${Math.round(busy)} ms busy`,
    "",
    "by area (self ms):",
  ];
  for (const [a, ms] of [...areas.entries()].sort((x, y) => y[1] - x[1]).slice(0, 15)) {
    lines.push(`  ${Math.round(ms).toString().padStart(7)}  ${a}`);
  }
  lines.push("", "by module of src/, with what it calls (ms):");
  for (const [m, ms] of [...modules.entries()].sort((x, y) => y[1] - x[1]).slice(0, top)) {
    lines.push(`  ${Math.round(ms).toString().padStart(7)}  ${m}`);
  }
  lines.push("", "by function (self ms):");
  for (const [k, ms] of [...fn.entries()].sort((x, y) => y[1] - x[1]).slice(0, top)) {
    lines.push(`  ${Math.round(ms).toString().padStart(7)}  ${k}`);
  }
  return lines.join("\n");
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const file of process.argv.slice(2)) process.stdout.write(`${await summarise(file)}\n\n`);
}
