import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPOSITORY } from './support/render';
import { readRepository, type ServiceFacts } from './support/repository';

/**
 * docs/CONFIGURATION.md against the services as built: every setting a service's configuration
 * takes is in its section or under "Every service", with its default, and no row names a setting
 * nothing takes.
 */

interface Row {
  settings: string[];
  defaults: string;
}

const SHARED = 'Every service';
/** Default cells that say the setting is unset. */
const UNSET = ['empty', 'none', "the system's", "the system's temp folder"];

/** The table rows of each `## ` section, by its title. */
function sectionsOf(markdown: string): Map<string, Row[]> {
  const sections = new Map<string, Row[]>();
  let rows: Row[] | undefined;
  for (const line of markdown.split('\n')) {
    const title = /^## (.+)$/.exec(line);
    if (title) sections.set(title[1] as string, (rows = []));
    const cells = line.split('|').map((cell) => cell.trim());
    if (rows === undefined || !line.startsWith('| `')) continue;
    rows.push({ settings: [...(cells[1] as string).matchAll(/`([A-Z][A-Z0-9_]*)`/g)].map((m) => m[1] as string), defaults: cells[2] as string });
  }
  return sections;
}

/** What a row's default cell must say for a setting whose parsed default is `value`. */
function defaultProblem(setting: string, value: unknown, cell: string): string | undefined {
  if (setting === 'SECRETS_KEY')
    return cell.includes('outside production only') ? undefined : `${setting}: the development key must be said to be for outside production only`;
  const unset = value === undefined || value === false || value === '' || (Array.isArray(value) && value.length === 0);
  if (unset) return UNSET.includes(cell) ? undefined : `${setting}: its default is unset, the page says "${cell}"`;
  const shown = typeof value === 'number' ? String(value) : typeof value === 'string' ? value : JSON.stringify(value);
  return cell.includes(shown) ? undefined : `${setting}: its default is ${shown}, the page says "${cell}"`;
}

const defaultOf = (service: ServiceFacts, setting: string): unknown => {
  const parsed = service.schema.shape[setting]?.safeParse(undefined);
  return parsed?.success ? parsed.data : undefined;
};

describe('docs/CONFIGURATION.md', () => {
  const repository = readRepository();
  const sections = sectionsOf(readFileSync(join(REPOSITORY, 'docs', 'CONFIGURATION.md'), 'utf8'));
  const shared = sections.get(SHARED) ?? [];

  test.each([...repository.services.keys()])('names every setting %s takes, with its default, in its section or the shared one', (name) => {
    const service = repository.services.get(name) as ServiceFacts;
    const rows = [...shared, ...(sections.get(name) ?? [])];
    const problems: string[] = [];
    for (const setting of Object.keys(service.schema.shape)) {
      const row = rows.find((r) => r.settings.includes(setting));
      if (row === undefined) {
        problems.push(`${setting}: not on the page`);
        continue;
      }
      // "10000, 60000" for two settings: each its own part; otherwise the whole cell.
      const parts = row.defaults.split(', ');
      const cell = parts.length === row.settings.length ? (parts[row.settings.indexOf(setting)] as string) : row.defaults;
      const problem = defaultProblem(setting, defaultOf(service, setting), cell);
      if (problem !== undefined) problems.push(problem);
    }
    expect(problems).toEqual([]);
  });

  test('every service has a section, and every setting a row names is one that service (or, shared, every service) takes', () => {
    const problems: string[] = [];
    for (const [name, service] of repository.services) {
      const rows = sections.get(name);
      if (rows === undefined) problems.push(`no "## ${name}" section`);
      for (const setting of (rows ?? []).flatMap((r) => r.settings)) {
        if (!(setting in service.schema.shape)) problems.push(`${name}: ${setting} is not a setting of the service`);
      }
    }
    for (const setting of shared.flatMap((r) => r.settings)) {
      const without = [...repository.services.values()].filter((service) => !(setting in service.schema.shape)).map((s) => s.name);
      if (without.length > 0) problems.push(`${SHARED}: ${setting} is not a setting of ${without.join(', ')}`);
    }
    expect(shared.length).toBeGreaterThan(0);
    expect(problems).toEqual([]);
  });
});
