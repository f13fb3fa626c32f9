import { describe, expect, it } from "vitest";
import { csvField, csvRecord } from "../../src/search/csv.ts";
import { readCursor, signCursor } from "../../src/search/cursor.ts";
import { filtersScope } from "../../src/search/search-messages.ts";

describe("csv", () => {
  it("quotes only what needs it, doubling quotes; records end in CRLF", () => {
    expect(csvField("plain")).toBe("plain");
    expect(csvField("+263771234567")).toBe("+263771234567");
    expect(csvField("a,b")).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField("two\nlines")).toBe('"two\nlines"');
    expect(csvField("cr\r")).toBe('"cr\r"');
    expect(csvField("")).toBe("");
    expect(csvRecord(["a", "b,c", ""])).toBe('a,"b,c",\r\n');
  });
});

describe("search cursors", () => {
  const key = Buffer.from("k".repeat(64));
  const scope = filtersScope("11111111-1111-4111-8111-111111111111", { status: "failed" });
  const position = { at: "2026-11-23T18:25:01.123456Z", id: "22222222-2222-4222-8222-222222222222" };

  it("reads back what it signed, for the same key and scope only", () => {
    const cursor = signCursor(key, scope, position);
    expect(readCursor(key, scope, cursor)).toEqual(position);
    expect(readCursor(Buffer.from("x".repeat(64)), scope, cursor)).toBeNull();
    const otherAccount = filtersScope("33333333-3333-4333-8333-333333333333", { status: "failed" });
    expect(readCursor(key, otherAccount, cursor)).toBeNull();
    expect(readCursor(key, filtersScope("11111111-1111-4111-8111-111111111111", {}), cursor)).toBeNull();
  });

  it("refuses any change to a cursor", () => {
    const cursor = signCursor(key, scope, position);
    for (let i = 0; i < cursor.length; i++) {
      const c = cursor[i] === "A" ? "B" : "A";
      const changed = cursor.slice(0, i) + c + cursor.slice(i + 1);
      // Base64url's last character may carry unused bits; a change there that decodes the same is no change.
      if (
        Buffer.from(changed.split(".")[1] ?? "", "base64url").equals(
          Buffer.from(cursor.split(".")[1] ?? "", "base64url"),
        ) &&
        changed.split(".")[0] === cursor.split(".")[0]
      )
        continue;
      expect(readCursor(key, scope, changed), changed).toBeNull();
    }
    expect(readCursor(key, scope, `${cursor}.x`)).toBeNull();
    expect(readCursor(key, scope, "")).toBeNull();
  });

  it("binds the recipient whichever way it is written", () => {
    const a = filtersScope("11111111-1111-4111-8111-111111111111", { to: "+263771234567" });
    const b = filtersScope("11111111-1111-4111-8111-111111111111", { to: "263771234567" });
    expect(a).toBe(b);
  });
});
