/**
 * Zengin dates are YYMMDD in the Japanese era with no era marker. 令和 began on 2019-05-01
 * (AD = 2018 + YY); 平成 ran from 1989-01-08 to 2019-04-30 (AD = 1988 + YY). A date is read as
 * 令和 unless that is impossible or more than a year after `today`, then as 平成 (the two readings
 * of one YY are 30 years apart). Returns YYYY-MM-DD, or undefined for a date neither era has.
 */
export function warekiDate(yymmdd: string, today: string): string | undefined {
  if (!/^[0-9]{6}$/.test(yymmdd)) return undefined;
  const [yy, mm, dd] = [yymmdd.slice(0, 2), yymmdd.slice(2, 4), yymmdd.slice(4, 6)].map(Number) as [number, number, number];
  const latest = `${Number(today.slice(0, 4)) + 1}${today.slice(4)}`;
  const reiwa = isoDate(2018 + yy, mm, dd);
  if (yy >= 1 && reiwa !== undefined && reiwa >= REIWA_START && reiwa <= latest) return reiwa;
  const heisei = isoDate(1988 + yy, mm, dd);
  if (yy >= 1 && heisei !== undefined && heisei >= HEISEI_START && heisei <= HEISEI_END) return heisei;
  return undefined;
}

const REIWA_START = '2019-05-01';
const HEISEI_START = '1989-01-08';
const HEISEI_END = '2019-04-30';

function isoDate(year: number, month: number, day: number): string | undefined {
  const date = new Date(Date.UTC(year, month - 1, day));
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return undefined;
  return date.toISOString().slice(0, 10);
}

/** Whether YYYY-MM-DD is a day of the Gregorian calendar. */
export function isIsoDate(text: string): boolean {
  const match = /^([0-9]{4})-([0-9]{2})-([0-9]{2})$/.exec(text);
  return match !== null && isoDate(Number(match[1]), Number(match[2]), Number(match[3])) === text;
}
