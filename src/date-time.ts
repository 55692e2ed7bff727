/**
 * Date-times a caller sends: RFC 3339 with a time and an offset, naming an instant PostgreSQL's
 * timestamptz and JavaScript's Date both hold, in years 0001–9999 once converted to UTC
 * (docs/api-conventions.md). `0001-01-01T00:00:00+01:00` is year 0 in UTC and is refused.
 */
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;

const FIRST = utc(1, 1, 1, 0, 0, 0);
const LAST = utc(9999, 12, 31, 23, 59, 59) + 999;

function utc(year: number, month: number, day: number, hour: number, minute: number, second: number) {
  const date = new Date(0);
  // setUTCFullYear, because Date.UTC reads years 0–99 as 1900–1999.
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, 0);
  return date.getTime();
}

export const DATE_TIME_RULE = 'must be an RFC 3339 date-time within years 0001–9999 in UTC';

/** The UTC instant (epoch ms) of a caller's date-time, or undefined when it is not a valid one. */
export function utcInstant(value: string): number | undefined {
  const match = RFC3339.exec(value);
  if (!match) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as number[];
  const [fraction, sign, offsetHours, offsetMinutes] = match.slice(7, 11);
  const daysInMonth = new Date(utc(year!, month! + 1, 0, 0, 0, 0)).getUTCDate();
  if (month! < 1 || month! > 12 || day! < 1 || day! > daysInMonth) return undefined;
  if (hour! > 23 || minute! > 59 || second! > 60) return undefined;
  if (Number(offsetHours ?? 0) > 15 || Number(offsetMinutes ?? 0) > 59) return undefined;
  const offsetMs = (Number(offsetHours ?? 0) * 60 + Number(offsetMinutes ?? 0)) * 60_000;
  const local =
    utc(year!, month!, day!, hour!, minute!, second!) + Math.floor(Number(`0${fraction ?? ''}`) * 1000);
  const instant = sign === '-' ? local + offsetMs : local - offsetMs;
  return instant >= FIRST && instant <= LAST ? instant : undefined;
}

export const isCallerDateTime = (value: string) => utcInstant(value) !== undefined;

/** A caller's calendar date (YYYY-MM-DD, midnight UTC), in years 0001–9999 as its date-times. */
export const isCallerDate = (value: string) =>
  /^\d{4}-\d{2}-\d{2}$/.test(value) && isCallerDateTime(`${value}T00:00:00Z`);
