import { parseArgs } from 'node:util';
import { MATCHING_RULES, NAME_RULES } from '@pmatch/contracts';
import { loadNameDictionary } from '../data/name-dictionary';
import { NameReadings } from '../domain/names/readings';
import { loadCorpus } from './corpus';
import { evaluate, RULE_SETS, type QualityReport } from './evaluate';
import { simulateStream, type MonthFigures, type StreamOptions } from './stream/simulate';

const percent = (part: number, whole: number): string => (whole === 0 ? '-' : `${((100 * part) / whole).toFixed(1)} %`);

function corpusRow(r: QualityReport): string {
  const cells = [
    r.ruleSet.padEnd(24),
    String(r.wrongConfirmations.length).padStart(6),
    `${r.confirmedRight}/${r.fair} (${percent(r.confirmedRight, r.fair)})`.padStart(20),
    `${r.heldFair}/${r.fair} (${percent(r.heldFair, r.fair)})`.padStart(20),
    `${r.held}/${r.cases} (${percent(r.held, r.cases)})`.padStart(20),
  ];
  return cells.join('  ');
}

/** The corpus under every rule set; the wrong confirmations it found. */
function printCorpus(readings: NameReadings): string[] {
  const cases = loadCorpus();
  const reports = RULE_SETS.map((set) => evaluate(cases, set, readings));
  const fair = reports[0]!.fair;
  console.log(
    `matching quality: ${cases.length} cases, ${fair} fair (the depositor paid one of the orders shown), ${cases.length - fair} where no confirmation is right\n`,
  );
  console.log(['rule set'.padEnd(24), 'wrong'.padStart(6), 'fair confirmed'.padStart(20), 'fair held'.padStart(20), 'all held'.padStart(20)].join('  '));
  for (const report of reports) console.log(corpusRow(report));
  return reports.flatMap((r) => r.wrongConfirmations.map((id) => `${r.ruleSet}: ${id}`));
}

const COLUMNS: [string, (f: MonthFigures) => string][] = [
  ['month', (f) => String(f.month)],
  ['deposits', (f) => String(f.deposits)],
  ['payable', (f) => String(f.payable)],
  ['confirmed automatically', (f) => `${f.confirmedAutomatically} (${percent(f.confirmedAutomatically, f.payable)})`],
  ['left to a person', (f) => String(f.leftToPerson)],
  ['amount differs', (f) => String(f.amountDiffers)],
  ['for no order', (f) => String(f.notForAnyOrder)],
  ['reported twice', (f) => String(f.reportedTwice)],
  ['wrong', (f) => String(f.wrongConfirmations)],
];

/**
 * The shop's stream with every rule on, month by month, then the share confirmed automatically
 * beside it under other settings; the wrong confirmations of any.
 */
function printStream(readings: NameReadings, seed: number, months: number): string[] {
  const base: Omit<StreamOptions, 'rules'> = { seed, months, readings };
  const variants: [string, StreamOptions][] = [
    ['every rule', { ...base, rules: MATCHING_RULES }],
    ['the four name rules alone', { ...base, rules: NAME_RULES }],
    ['every rule, no buyer writes a code', { ...base, rules: MATCHING_RULES, codeShare: 0 }],
    ['every rule, kanji orders no rivals', { ...base, rules: MATCHING_RULES, readings: undefined }],
    ['every rule, half the buyers an account of their own', { ...base, rules: MATCHING_RULES, dedicatedShare: 0.5 }],
    ['every rule, every buyer an account of their own', { ...base, rules: MATCHING_RULES, dedicatedShare: 1 }],
  ];
  const results = variants.map(([name, options]) => [name, simulateStream(options)] as const);
  const [, everyRule] = results[0]!;
  console.log(`matching stream (seed ${seed}): a shop's returning customers over ${months} months, every rule on\n`);
  const widths = COLUMNS.map(([title]) => Math.max(title.length, 14));
  console.log(COLUMNS.map(([title], i) => title.padStart(widths[i]!)).join('  '));
  for (const f of everyRule) console.log(COLUMNS.map(([, cell], i) => cell(f).padStart(widths[i]!)).join('  '));
  console.log('\nleft to a person, by reason:');
  for (const f of everyRule) console.log(`  month ${f.month}: ${JSON.stringify(f.leftBecause)}`);
  console.log('\npayable deposits confirmed automatically, by month:');
  for (const [name, figures] of results) {
    console.log(`  ${name.padEnd(52)} ${figures.map((f) => percent(f.confirmedAutomatically, f.payable).padStart(8)).join('')}`);
  }
  return results.flatMap(([name, figures]) => figures.filter((f) => f.wrongConfirmations > 0).map((f) => `${name}, month ${f.month}: ${f.wrongConfirmations}`));
}

/**
 * `pnpm quality`: the matching-quality corpus under every rule set. `pnpm quality stream [--seed N]
 * [--months N]`: the shop's stream (docs/matching-quality.md). Exits 1 on any wrong confirmation.
 */
async function main(): Promise<void> {
  const { positionals, values } = parseArgs({
    allowPositionals: true,
    options: { seed: { type: 'string', default: '1' }, months: { type: 'string', default: '4' } },
  });
  const readings = new NameReadings(await loadNameDictionary());
  const wrong = positionals[0] === 'stream' ? printStream(readings, Number(values.seed), Number(values.months)) : printCorpus(readings);
  if (wrong.length > 0) {
    console.error(`\nWRONG CONFIRMATIONS:\n${wrong.join('\n')}`);
    process.exit(1);
  }
}

void main();
