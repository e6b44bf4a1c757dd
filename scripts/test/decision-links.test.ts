import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';

/**
 * Every link to a decision record resolves: a path naming `decisions/NNNN-….md` anywhere in the
 * repository's tracked text (code comments, docs, migrations, manifests), relative to the
 * repository's root or to the file that holds it, and every "decision N" a document cites.
 */

const ROOT = join(__dirname, '..', '..');
const RECORDS = readdirSync(join(ROOT, 'docs', 'decisions')).filter((f) => /^\d{4}-.+\.md$/.test(f));
const NUMBERS = new Set(RECORDS.map((f) => Number(f.slice(0, 4))));

const trackedTextFiles = (): string[] =>
  execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' })
    .split('\0')
    .filter((f) => f !== '' && /\.(ts|tsx|js|mjs|cjs|md|sql|sh|ya?ml|json|prisma)$/.test(f) && !f.endsWith('pnpm-lock.yaml') && existsSync(join(ROOT, f)));

/** The decision-record paths a text names, as written. */
function recordPathsIn(text: string): string[] {
  return [...text.matchAll(/(?:[\w./-]*\/)?decisions\/\d{4}-[\w.-]*?\.md/g)].map((m) => m[0]);
}

function resolves(file: string, linked: string): boolean {
  return [join(ROOT, linked), resolve(dirname(join(ROOT, file)), linked)].some((candidate) => existsSync(candidate));
}

test('when a file links a decision record by its path, then the record exists', () => {
  const broken = trackedTextFiles().flatMap((file) =>
    recordPathsIn(readFileSync(join(ROOT, file), 'utf8'))
      .filter((linked) => !resolves(file, linked))
      .map((linked) => `${file}: ${linked}`),
  );
  expect(broken).toEqual([]);
});

test('when a document cites a decision by number, then a record with that number exists', () => {
  const cited = trackedTextFiles()
    .filter((file) => file.endsWith('.md'))
    .flatMap((file) =>
      [...readFileSync(join(ROOT, file), 'utf8').matchAll(/\b[Dd]ecisions? (\d{1,4})(?:(?:, | and )(\d{1,4}))*/g)].flatMap((m) =>
        m[0]
          .replace(/^[Dd]ecisions? /, '')
          .split(/, | and /)
          .map((n) => ({ file, n: Number(n) })),
      ),
    );
  expect(cited.length).toBeGreaterThan(0);
  expect(cited.filter(({ n }) => !NUMBERS.has(n)).map(({ file, n }) => `${file}: decision ${n}`)).toEqual([]);
});
