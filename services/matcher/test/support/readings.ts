import { loadNameDictionary } from '../../src/data/name-dictionary';
import { NameReadings } from '../../src/domain/names/readings';

let loading: Promise<NameReadings> | undefined;

/** The readings of kanji names the matcher loads at start-up, loaded once per test file. */
export function testReadings(): Promise<NameReadings> {
  loading ??= loadNameDictionary().then((dictionary) => new NameReadings(dictionary));
  return loading;
}
