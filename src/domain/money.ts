/**
 * Amounts are integers in ten-thousandths of the currency: "12.5" → 125000. An amount given is at
 * most 999,999,999.9999, so that it, and a balance of many of them, stays an exact JavaScript
 * number (up to 2^53 ten-thousandths, some 900 billion).
 */
const DECIMAL = /^(\d{1,9})(?:\.(\d{1,4}))?$/;
export const MAX_AMOUNT_TEXT = "999999999.9999";

export function parseAmount(text: string): number | null {
  const m = DECIMAL.exec(text.trim());
  if (!m) return null;
  const whole = Number(m[1]);
  const fraction = Number((m[2] ?? "").padEnd(4, "0"));
  return whole * 10_000 + fraction;
}

export function formatAmount(amount: number): string {
  const sign = amount < 0 ? "-" : "";
  const abs = Math.abs(amount);
  return `${sign}${Math.floor(abs / 10_000)}.${String(abs % 10_000).padStart(4, "0")}`;
}
