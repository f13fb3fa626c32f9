/**
 * Per-segment prices, in integer ten-thousandths of the account currency, read from the carrier
 * tables. Unroutable numbers are billed at the highest price any carrier charges in that currency.
 */
import { CARRIERS, OPERATORS, type Operator } from "../../carriers/index.ts";

function carrierPrice(op: Operator, currency: string): number | undefined {
  const prices = CARRIERS[op].pricePerSegment;
  // hasOwn so that "constructor" or "__proto__" is not mistaken for a priced currency.
  return Object.hasOwn(prices, currency) ? prices[currency] : undefined;
}

function assertIntegerPrice(op: Operator, currency: string, price: number): void {
  if (!Number.isSafeInteger(price) || price < 0) {
    throw new Error(`carrier ${op} has an invalid ${currency} price ${price}: need a non-negative integer`);
  }
}

export function isPricedCurrency(currency: string): boolean {
  return OPERATORS.some((op) => carrierPrice(op, currency) !== undefined);
}

export function pricePerSegment(operator: Operator | null, currency: string): number {
  if (!isPricedCurrency(currency)) throw new Error(`no carrier prices messages in currency ${currency}`);
  if (operator !== null) {
    const price = carrierPrice(operator, currency);
    if (price === undefined) throw new Error(`carrier ${operator} has no price in currency ${currency}`);
    assertIntegerPrice(operator, currency, price);
    return price;
  }
  let highest = 0;
  for (const op of OPERATORS) {
    const price = carrierPrice(op, currency);
    if (price === undefined) continue;
    assertIntegerPrice(op, currency, price);
    highest = Math.max(highest, price);
  }
  return highest;
}

export function priceMessage(operator: Operator | null, segments: number, currency: string): number {
  if (!Number.isSafeInteger(segments) || segments < 1) {
    throw new RangeError(`segments must be a positive integer, got ${segments}`);
  }
  const total = pricePerSegment(operator, currency) * segments;
  // Money is integer arithmetic; past 2^53 it would silently round.
  if (!Number.isSafeInteger(total)) throw new RangeError(`message price overflows: ${total}`);
  return total;
}
