/**
 * CSV as RFC 4180 writes it: fields joined by commas, records ended by CRLF, a field quoted when
 * it holds a comma, a double quote, CR or LF (its quotes doubled). Values are written exactly as
 * stored: a text starting with "=" or "+" is not altered, since a reconciliation file must match
 * the records (spreadsheet users import it as text).
 */
export function csvField(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

export function csvRecord(fields: readonly string[]): string {
  return `${fields.map(csvField).join(",")}\r\n`;
}
