import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** How `BENCH_UPDATE_DOCS=1` writes a run into the docs (bench/lib/report.mjs, plain Node ESM). */

const REPORT = join(__dirname, '..', '..', 'bench', 'lib', 'report.mjs');

const RESULT = {
  runId: '20260101T000000-abcd',
  config: { scale: 'full' },
  startedAt: '2026-01-01T00:00:00.000Z',
  durationSeconds: 600,
  machine: {
    nproc: 2,
    cpuModel: 'Test CPU',
    memoryGiB: 8,
    kernel: 'Linux',
    node: 'v24',
    postgres: '15',
    rabbitmq: '3.10',
    redis: '7',
    loadAverageAtStart: [1, 1, 1],
  },
  phases: {},
  peakRssMiB: { matcher: 123 },
  failures: ['two deposits were decided twice'],
  notes: ['a note of the run'],
};

function writeInto(repo: string, result: unknown): string[] {
  const script = `import { writeResults } from ${JSON.stringify(REPORT)};
const { written } = writeResults(${JSON.stringify(repo)}, ${JSON.stringify(result)}, true);
process.stdout.write(JSON.stringify(written));`;
  return JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', stdio: 'pipe' })) as string[];
}

function repoWithDocs(text: string): string {
  const repo = mkdtempSync(join(tmpdir(), 'bench-report-'));
  mkdirSync(join(repo, 'docs'));
  writeFileSync(join(repo, 'docs', 'BENCHMARKS.md'), text);
  return repo;
}

describe('a run written into the docs', () => {
  test('BENCHMARKS.md gets the summary between its markers and a link; the whole report goes to its own file', () => {
    const repo = repoWithDocs('# Benchmarks\n\nprose before\n\n<!-- bench:results:start -->\nan older run\n<!-- bench:results:end -->\n\nprose after\n');
    const written = writeInto(repo, RESULT);
    expect(written).toEqual(expect.arrayContaining(['docs/BENCHMARKS.md', 'docs/benchmarks/last-full-run.md', 'bench-results/20260101T000000-abcd-full.md']));

    const docs = readFileSync(join(repo, 'docs', 'BENCHMARKS.md'), 'utf8');
    expect(docs.startsWith('# Benchmarks\n\nprose before\n\n<!-- bench:results:start -->\nRun `20260101T000000-abcd`')).toBe(true);
    expect(docs.endsWith('<!-- bench:results:end -->\n\nprose after\n')).toBe(true);
    expect(docs).not.toContain('an older run');
    expect(docs).toContain('| ≥ 500 deposit decisions/s sustained | not measured | not measured |');
    expect(docs).toContain('- two deposits were decided twice');
    expect(docs).toContain('Every table of this run: [benchmarks/last-full-run.md](benchmarks/last-full-run.md).');
    expect(docs).not.toContain('a note of the run');

    const report = readFileSync(join(repo, 'docs', 'benchmarks', 'last-full-run.md'), 'utf8');
    const runReport = readFileSync(join(repo, 'bench-results', '20260101T000000-abcd-full.md'), 'utf8');
    expect(report.startsWith('# The last full benchmark run\n')).toBe(true);
    expect(report.endsWith(runReport)).toBe(true);
    expect(runReport).toContain('- two deposits were decided twice');
    expect(runReport).toContain('- a note of the run');
  });

  test('a BENCHMARKS.md without the markers is refused and left as it was', () => {
    const repo = repoWithDocs('# Benchmarks\n\nno markers\n');
    expect(() => writeInto(repo, RESULT)).toThrow(/no <!-- bench:results:start --> … <!-- bench:results:end --> block/);
    expect(readFileSync(join(repo, 'docs', 'BENCHMARKS.md'), 'utf8')).toBe('# Benchmarks\n\nno markers\n');
  });
});
