import { describe, expect, it } from "vitest";
import { parseJsonBody } from "../../src/intake/json-body.ts";

describe("parseJsonBody: as express.json reads a UTF-8 body in strict mode", () => {
  const parse = (text: string) => parseJsonBody(Buffer.from(text, "utf8"));

  it("objects and arrays, with whitespace and a byte order mark around them", () => {
    expect(parse('{"to":"+263771234567"}')).toEqual({ value: { to: "+263771234567" } });
    expect(parse(' \t\r\n{"a":[1,"ü"]} \n')).toEqual({ value: { a: [1, "ü"] } });
    expect(parse("\uFEFF[1,2]")).toEqual({ value: [1, 2] });
  });

  it("an empty body is an empty object (a byte order mark alone too)", () => {
    expect(parse("")).toEqual({ value: {} });
    expect(parse("\uFEFF")).toEqual({ value: {} });
  });

  it("anything but an object or an array, or broken JSON, is malformed", () => {
    for (const text of [" ", "42", '"text"', "null", "true", "{bad", '{"a":1,}', "{}}", "\u0000", "NaN"])
      expect(parse(text), JSON.stringify(text)).toEqual({ error: "malformedJson" });
  });

  it("bytes that are not UTF-8 are unreadable, before any JSON is looked at", () => {
    expect(parseJsonBody(Buffer.from([0x7b, 0xff, 0x7d]))).toEqual({ error: "unreadableBody" });
    expect(parseJsonBody(Buffer.from([0xc3]))).toEqual({ error: "unreadableBody" });
  });
});
