const IMF_FIXDATE = /^[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT$/;
const RFC_850 = /^[A-Z][a-z]+, \d{2}-[A-Z][a-z]{2}-\d{2} \d{2}:\d{2}:\d{2} GMT$/;
const ASCTIME = /^[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \d{4}$/;

/**
 * A Retry-After header (RFC 9110 §10.2.3) as milliseconds from `now`: delay-seconds or an
 * HTTP-date (all three historic formats, always UTC). A date in the past is 0; anything else
 * that is not one of those forms is ignored (undefined).
 */
export function parseRetryAfter(
  value: string | readonly string[] | undefined,
  now: Date,
): number | undefined {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!text) return undefined;
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  let at = Number.NaN;
  if (IMF_FIXDATE.test(text) || RFC_850.test(text)) at = Date.parse(text);
  else if (ASCTIME.test(text)) at = Date.parse(`${text} GMT`);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now.getTime());
}
