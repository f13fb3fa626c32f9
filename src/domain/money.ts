/** Amounts are integers in ten-thousandths of the currency: "12.5" → 125000. */
const DECIMAL = /^(\d{1,12})(?:\.(\d{1,4}))?$/;

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
