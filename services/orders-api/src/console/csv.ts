import type { Response } from 'express';

/**
 * CSV as spreadsheet programs and accounting software read it (RFC 4180): UTF-8 after a byte order
 * mark (without it Excel reads Japanese as Shift_JIS and garbles it), CRLF line ends, every text
 * cell quoted. A text cell that a spreadsheet would take as a formula (starting with = + - @, their
 * full-width forms, a tab or a carriage return) gets a leading ' so it stays text (OWASP "CSV
 * injection").
 * Numbers (yen, always integers) are written as they are.
 */

export const BOM = '\uFEFF';

const FORMULA_START = /^[=+\-@\t\r＝＋－＠]/;

/** A text cell: neutralised when it could start a formula, then quoted with its quotes doubled. */
export function csvText(value: string): string {
  const safe = FORMULA_START.test(value) ? `'${value}` : value;
  return `"${safe.replace(/"/g, '""')}"`;
}

export type CsvCell = string | number | bigint | null | undefined;

/** One line: numbers as digits, text quoted and neutralised, null and undefined empty. */
export function csvLine(cells: readonly CsvCell[]): string {
  return `${cells.map((c) => (c === null || c === undefined ? '' : typeof c === 'string' ? csvText(c) : String(c))).join(',')}\r\n`;
}

/**
 * Answers with a CSV download, written as its lines come (a page of rows at a time), waiting for
 * the client to take each before reading the next: an export of any length holds one page in memory.
 */
export async function sendCsv(res: Response, fileName: string, header: readonly string[], lines: AsyncIterable<string[]>): Promise<void> {
  res.status(200);
  res.setHeader('content-type', 'text/csv; charset=utf-8');
  res.setHeader('content-disposition', `attachment; filename="${fileName}"`);
  res.setHeader('cache-control', 'no-store');
  res.write(BOM + csvLine(header));
  for await (const page of lines) {
    if (page.length === 0) continue;
    if (res.write(page.join(''))) continue;
    await new Promise<void>((resolve) => {
      res.once('drain', resolve);
      res.once('close', resolve);
    });
    // A client that went away reads no further page.
    if (res.destroyed) return;
  }
  res.end();
}
