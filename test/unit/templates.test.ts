import { describe, expect, it } from "vitest";
import { fillTemplate, isWrittenExactly, parseTemplate, type Template } from "../../src/domain/templates.ts";

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

  it("writes a number in its shortest form: 12.50 as 12.5, -0 as 0, 1e3 as 1000", () => {
    const t = parsed("{{a}} {{b}} {{c}} {{d}}");
    expect(
      fillTemplate(t, { a: JSON.parse("12.50"), b: JSON.parse("-0"), c: JSON.parse("1e3"), d: -7 }),
    ).toEqual({
      text: "12.5 0 1000 -7",
    });
  });

  it.each([
    ["0", true],
    ["-0", true],
    ["12.50", true],
    ["123456789012345", true], // 15 digits
    ["-999999999999999", true],
    ["0.000001", true], // the smallest that String() writes without an exponent
    ["0.123456789012345", true], // 15 significant digits: leading zeros do not count
    ["100000000000000000000", false], // past Number.MAX_SAFE_INTEGER: other integers read as this one
    ["12345678901234567890", false],
    ["9007199254740993", false],
    ["1234567890123456", false], // 16 digits: 1234567890123456.1 reads as this
    ["1e21", false], // String() writes an exponent
    ["1e-7", false],
    ["0.1234567890123456", false], // 16 significant digits
    ["3.141592653589793", false],
  ])("%s is written exactly: %s", (json, exact) => {
    expect(isWrittenExactly(JSON.parse(json))).toBe(exact);
  });
});
