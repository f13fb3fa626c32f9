import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

/**
 * The README and the manual under docs/ are one set of pages: every relative link in them must
 * reach a file of the repository, and a heading of that file where it names one; none may point
 * at the contract outside the repository; and the README stays a short front page.
 */
const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const read = (file: string) => readFileSync(path.join(ROOT, file), "utf8");

function markdownUnder(folder: string): string[] {
  return readdirSync(path.join(ROOT, folder), { withFileTypes: true }).flatMap((entry) => {
    const file = `${folder}/${entry.name}`;
    if (entry.isDirectory()) return markdownUnder(file);
    return entry.name.endsWith(".md") ? [file] : [];
  });
}

const PAGES = ["README.md", ...markdownUnder("docs")];

/** The text outside fenced code blocks: a `#` or `](` inside one is code, not Markdown. */
function prose(text: string): string {
  return text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, "");
}

/** A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/** Every anchor a page offers, numbered as GitHub numbers repeated headings (-1, -2 …). */
function anchors(file: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const [, text = ""] of prose(read(file)).matchAll(/^#{1,6} +(.+?) *#* *$/gm)) {
    const base = slug(text);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    out.add(count === 0 ? base : `${base}-${count}`);
  }
  return out;
}

function links(file: string): string[] {
  return [...prose(read(file)).matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1] ?? "");
}

describe("the README and docs/", () => {
  it("the slug is GitHub's", () => {
    expect(slug("Deliveries and redelivery (extension, Kit conventions)")).toBe(
      "deliveries-and-redelivery-extension-kit-conventions",
    );
    expect(slug("DELETE /api/v1/sms/{id}")).toBe("delete-apiv1smsid");
    expect(slug("Send options: smart encoding, validity and delivery windows")).toBe(
      "send-options-smart-encoding-validity-and-delivery-windows",
    );
  });

  it("every relative link reaches a file of the repository, and the heading it names", () => {
    const broken: string[] = [];
    for (const file of PAGES)
      for (const target of links(file)) {
        if (/^(https?:|mailto:)/.test(target)) continue;
        const [pathPart = "", anchor] = target.split("#");
        const resolved =
          pathPart === ""
            ? path.join(ROOT, file)
            : path.resolve(path.dirname(path.join(ROOT, file)), pathPart);
        if (!resolved.startsWith(ROOT)) broken.push(`${file}: ${target} leaves the repository`);
        else if (!existsSync(resolved)) broken.push(`${file}: ${target} does not exist`);
        else if (anchor !== undefined && statSync(resolved).isFile() && resolved.endsWith(".md")) {
          const page = path.relative(ROOT, resolved);
          if (!anchors(page).has(anchor)) broken.push(`${file}: ${target} names no heading of ${page}`);
        }
      }
    expect(broken).toEqual([]);
  });

  it("never point at the contract outside the repository", () => {
    for (const file of PAGES) expect(read(file), file).not.toMatch(/shared\/spec|sms-api\.md/);
  });

  it("the README stays a front page of at most 220 lines, and links every page of the manual", () => {
    const readme = read("README.md");
    expect(readme.split("\n").length).toBeLessThanOrEqual(220);
    expect(readme).toContain("npm start");
    expect(readme).toContain("npm test");
    const manual = readdirSync(path.join(ROOT, "docs")).filter((f) => f.endsWith(".md"));
    expect(manual.length).toBeGreaterThanOrEqual(9);
    for (const page of manual) expect(readme, page).toContain(`](docs/${page})`);
  });
});

describe("docs/configuration.md", () => {
  it("names every setting src/config.ts reads from the environment", () => {
    const settings = [...read("src/config.ts").matchAll(/^ {2}([A-Z][A-Z0-9_]+):/gm)].map((m) => m[1] ?? "");
    expect(settings.length).toBeGreaterThan(50);
    const page = read("docs/configuration.md");
    expect(settings.filter((name) => !page.includes(`\`${name}\``))).toEqual([]);
  });
});
