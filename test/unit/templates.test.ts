import { describe, expect, it } from "vitest";
import { fillTemplate, parseTemplate, type Template } from "../../src/domain/templates.ts";

function parsed(text: string): Template {
  const t = parseTemplate(text);
  if ("invalid" in t) throw new Error(`not a template: ${t.invalid}`);
  return t;
}

describe("templates", () => {
  it("fills every placeholder, a name used twice in both places, spaces in braces allowed", () => {
    const t = parsed("Hi {{name}}, you owe {{ amount }}. Thanks, {{name}}!");
    expect(t.variables).toEqual(["name", "amount"]);
    expect(fillTemplate(t, { name: "Rudo", amount: 12.5 })).toEqual({
      text: "Hi Rudo, you owe 12.5. Thanks, Rudo!",
    });
  });

  it("names every missing variable, in order of first use, and ignores extra ones", () => {
    const t = parsed("{{a}} {{b}} {{c}} {{a}}");
    expect(fillTemplate(t, { b: "x", z: "unused" })).toEqual({ missing: ["a", "c"] });
    expect(fillTemplate(t, { a: "1", b: "2", c: "3", z: "unused" })).toEqual({ text: "1 2 3 1" });
  });

  it("a variable that is inherited from Object is missing, not filled", () => {
    expect(fillTemplate(parsed("{{constructor}}"), {})).toEqual({ missing: ["constructor"] });
  });

  it("takes a text without placeholders as it is, and braces that are no placeholder as text", () => {
    expect(fillTemplate(parsed("no placeholders"), {})).toEqual({ text: "no placeholders" });
    expect(fillTemplate(parsed("{ a } }} {{ x"), {})).toEqual({ text: "{ a } }} {{ x" });
  });

  it("refuses a placeholder that names nothing usable", () => {
    expect(parseTemplate("Hi {{first name}}")).toEqual({ invalid: "{{first name}}" });
    expect(parseTemplate("Hi {{}}")).toEqual({ invalid: "{{}}" });
    expect(parseTemplate("Hi {{1st}}")).toEqual({ invalid: "{{1st}}" });
  });

  it("does not read a value's own braces as placeholders", () => {
    expect(fillTemplate(parsed("{{a}}{{b}}"), { a: "{{b}}", b: "!" })).toEqual({ text: "{{b}}!" });
  });
});
