import { loadCorpus } from './corpus';
import { evaluate, RULE_SETS, type QualityReport } from './evaluate';

const percent = (part: number, whole: number): string => (whole === 0 ? '-' : `${((100 * part) / whole).toFixed(1)} %`);

function row(r: QualityReport): string {
  const cells = [
    r.ruleSet.padEnd(24),
    String(r.wrongConfirmations.length).padStart(6),
    `${r.confirmedRight}/${r.fair} (${percent(r.confirmedRight, r.fair)})`.padStart(20),
    `${r.heldFair}/${r.fair} (${percent(r.heldFair, r.fair)})`.padStart(20),
    `${r.held}/${r.cases} (${percent(r.held, r.cases)})`.padStart(20),
  ];
  return cells.join('  ');
}

/** Prints, per rule set, the wrong confirmations and the shares confirmed and held; exits 1 on any wrong confirmation. */
function main(): void {
  const cases = loadCorpus();
  const reports = RULE_SETS.map((set) => evaluate(cases, set));
  const fair = reports[0]!.fair;
  console.log(
    `matching quality: ${cases.length} cases, ${fair} fair (the depositor paid one of the orders shown), ${cases.length - fair} where no confirmation is right\n`,
  );
  console.log(['rule set'.padEnd(24), 'wrong'.padStart(6), 'fair confirmed'.padStart(20), 'fair held'.padStart(20), 'all held'.padStart(20)].join('  '));
  for (const report of reports) console.log(row(report));
  const wrong = reports.flatMap((r) => r.wrongConfirmations.map((id) => `${r.ruleSet}: ${id}`));
  if (wrong.length > 0) {
    console.error(`\nWRONG CONFIRMATIONS:\n${wrong.join('\n')}`);
    process.exit(1);
  }
}

main();
