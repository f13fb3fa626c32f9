/**
 * Delivery windows: the local hours of a day in which a message may be sent (`08:00` to `20:00`
 * in `Africa/Harare`). A message due outside its window waits for the window's next start. The
 * start is inclusive and the end exclusive; an end before the start spans midnight (`22:00` to
 * `06:00`). Local times follow the time zone's rules, daylight saving included: a start that a
 * clock change skips is moved forward by the gap (02:30 on a night that jumps from 02:00 to 03:00
 * opens at 03:30, as JavaScript's Temporal reads such a time).
 */

export interface DeliveryWindow {
  /** HH:MM, 24-hour local time. */
  start: string;
  end: string;
  /** An IANA time zone name. */
  time_zone: string;
}

export const TIME_OF_DAY = /^([01]\d|2[0-3]):([0-5]\d)$/;

/** Minutes since local midnight of an HH:MM time. */
export function minutesOf(time: string): number {
  const match = TIME_OF_DAY.exec(time);
  if (!match) throw new RangeError(`not a time of day: ${time}`);
  return Number(match[1]) * 60 + Number(match[2]);
}

const formatters = new Map<string, Intl.DateTimeFormat>();

/** The formatter that reads an instant's local date and time in a (canonical) zone; throws for an unknown one. */
function formatterOf(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

/** The zone's name as Intl spells it (`africa/harare` → `Africa/Harare`), or null for no zone. */
export function canonicalTimeZone(name: string): string | null {
  if (name.length === 0 || name.length > 64) return null;
  try {
    // Not cached: a client could name the same zone in endless letter cases.
    return new Intl.DateTimeFormat("en-US", { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}

interface LocalTime {
  year: number;
  month: number;
  day: number;
  /** Seconds since local midnight. */
  seconds: number;
}

function localTime(at: Date, timeZone: string): LocalTime {
  const parts: Record<string, number> = {};
  for (const p of formatterOf(timeZone).formatToParts(at))
    if (p.type !== "literal") parts[p.type] = Number(p.value);
  return {
    year: parts.year ?? 0,
    month: parts.month ?? 1,
    day: parts.day ?? 1,
    seconds: (parts.hour ?? 0) * 3600 + (parts.minute ?? 0) * 60 + (parts.second ?? 0),
  };
}

/** The zone's offset from UTC at an instant, in milliseconds. */
function offsetAt(at: Date, timeZone: string): number {
  const t = localTime(at, timeZone);
  const asUtc = Date.UTC(t.year, t.month - 1, t.day) + t.seconds * 1000;
  return asUtc - Math.floor(at.getTime() / 1000) * 1000;
}

const wallOf = (t: LocalTime) => Date.UTC(t.year, t.month - 1, t.day) + t.seconds * 1000;

/**
 * The instants a local date and time names in the zone, earliest first: two when the clocks go
 * back over it; one, moved forward by the gap, when the clocks skip it.
 */
function instantsOf(
  year: number,
  month: number,
  day: number,
  minutes: number,
  timeZone: string,
): [Date, ...Date[]] {
  const wall = Date.UTC(year, month - 1, day) + minutes * 60_000;
  // A clock change near the wall time lies between the offsets a day either side of it.
  const named = [-86_400_000, 0, 86_400_000]
    .map((shift) => wall - offsetAt(new Date(wall + shift), timeZone))
    .filter((t) => wallOf(localTime(new Date(t), timeZone)) === wall);
  const [earliest, ...later] = [...new Set(named)].sort((a, b) => a - b).map((t) => new Date(t));
  if (earliest) return [earliest, ...later];
  let guess = wall - offsetAt(new Date(wall), timeZone);
  // Twice: the offset at the first guess may differ from the offset at the answer (a clock change).
  guess = wall - offsetAt(new Date(guess), timeZone);
  const checkWall = wallOf(localTime(new Date(guess), timeZone));
  // A skipped local time (spring forward) lands before the wall time asked for: move past the gap.
  if (checkWall < wall) guess += wall - checkWall;
  return [new Date(guess)];
}

export function isInside(window: DeliveryWindow, at: Date): boolean {
  const start = minutesOf(window.start) * 60;
  const end = minutesOf(window.end) * 60;
  const now = localTime(at, window.time_zone).seconds;
  return start < end ? now >= start && now < end : now >= start || now < end;
}

/**
 * When a message due at `at` may go: `at` itself inside the window, else the window's next
 * start. Never earlier than `at`.
 */
export function nextOpening(window: DeliveryWindow, at: Date): Date {
  if (isInside(window, at)) return at;
  const local = localTime(at, window.time_zone);
  const start = minutesOf(window.start);
  // Outside the window: its next start is today's when that is still ahead (the second of a start
  // the clocks go back over, too), else tomorrow's first.
  const today = instantsOf(local.year, local.month, local.day, start, window.time_zone);
  const ahead = today.find((opening) => opening.getTime() > at.getTime());
  if (ahead) return ahead;
  const tomorrow = new Date(Date.UTC(local.year, local.month - 1, local.day + 1));
  return instantsOf(
    tomorrow.getUTCFullYear(),
    tomorrow.getUTCMonth() + 1,
    tomorrow.getUTCDate(),
    start,
    window.time_zone,
  )[0];
}
