/**
 * Message templates: a text with `{{name}}` placeholders, filled per recipient from that
 * recipient's variables. Names are letters, digits and underscores, not starting with a digit;
 * spaces inside the braces are allowed (`{{ name }}`). Braces that do not form a placeholder
 * (`{`, `}}`, `{{` without a closing pair) are text like any other.
 */

const PLACEHOLDER = /\{\{([^{}]*)\}\}/g;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

export interface Template {
  /** The text between placeholders: one more than `names`. */
  texts: readonly string[];
  /** The placeholder at each gap, in order (a name may appear more than once). */
  names: readonly string[];
  /** Every name the template uses, once each, in order of first use. */
  variables: readonly string[];
}

/** A template, or the placeholder that is not one (`{{first name}}`, `{{}}`). */
export function parseTemplate(template: string): Template | { invalid: string } {
  const texts: string[] = [];
  const names: string[] = [];
  let last = 0;
  for (const match of template.matchAll(PLACEHOLDER)) {
    const name = (match[1] ?? "").trim();
    if (!NAME.test(name)) return { invalid: match[0] };
    texts.push(template.slice(last, match.index));
    names.push(name);
    last = match.index + match[0].length;
  }
  texts.push(template.slice(last));
  return { texts, names, variables: [...new Set(names)] };
}

export type Variables = Readonly<Record<string, string | number>>;

/** Past this many significant digits a number's text does not survive being read as a double. */
const EXACT_DIGITS = 15;

/**
 * Whether a number read from JSON is written back (by String(), in its shortest form) as the
 * number the client sent. Only the value reaches us, not the text, so a number is refused when
 * another number could have read as the same value: more than 15 significant digits (a number of
 * up to 15 comes back as itself; 1234567890123456.1 reads as 1234567890123456, 2^53 + 1 as 2^53),
 * or a value String() writes with an exponent (1e21, 1e-7).
 */
export function isWrittenExactly(value: number): boolean {
  const text = String(value);
  if (text.includes("e")) return false;
  return text.replace(/[-.]/g, "").replace(/^0+/, "").length <= EXACT_DIGITS;
}

/** The template filled in, or the names it uses that `variables` lacks (in order of first use). */
export function fillTemplate(
  template: Template,
  variables: Variables,
): { text: string } | { missing: string[] } {
  const missing = template.variables.filter((name) => !Object.hasOwn(variables, name));
  if (missing.length > 0) return { missing };
  let text = template.texts[0] ?? "";
  // A number in its shortest form (12.50 as 12.5, -0 as 0); a string as given.
  for (let i = 0; i < template.names.length; i++)
    text += String(variables[template.names[i] as string]) + (template.texts[i + 1] ?? "");
  return { text };
}
