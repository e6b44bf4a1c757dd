import { ReplacedSecrets } from '@pmatch/contracts';
import type { PrismaClient } from '@pmatch/db';
import { SecretNotOpened, type SecretBox, type SecretOwner } from '@pmatch/platform';

/** What `secrets reseal` did, per kind of row: resealed, already current, and the rows whose secret did not open. */
export interface ResealReport {
  webhook_endpoints: ResealCounts;
  bank_adapters: ResealCounts;
  users: ResealCounts;
}

interface ResealCounts {
  resealed: number;
  unchanged: number;
  /** Rows left as they were: a secret did not open with any configured key, or not for this row. */
  unopenable: string[];
}

/**
 * Seals every stored secret again under SECRETS_KEY, bound to its row: webhook signing secrets
 * (current and replaced), bank adapter secrets and console TOTP secrets. A row is rewritten only
 * if it still holds what was read, so a rotation made meanwhile is kept (a later run reseals it);
 * running it twice changes nothing the second time. Secrets never leave this process.
 */
export async function resealSecrets(prisma: PrismaClient, secretBox: SecretBox): Promise<ResealReport> {
  return {
    webhook_endpoints: await resealWebhookEndpoints(prisma, secretBox),
    bank_adapters: await resealRows(
      secretBox,
      'bank_adapter',
      await prisma.bankAdapter.findMany({ select: { id: true, secretEncrypted: true }, orderBy: { id: 'asc' } }),
      async (id, before, after) =>
        (await prisma.bankAdapter.updateMany({ where: { id, secretEncrypted: before }, data: { secretEncrypted: after } })).count === 1,
    ),
    users: await resealRows(
      secretBox,
      'user_totp',
      (
        await prisma.user.findMany({ where: { totpSecretEncrypted: { not: null } }, select: { id: true, totpSecretEncrypted: true }, orderBy: { id: 'asc' } })
      ).map((u) => ({ id: u.id, secretEncrypted: u.totpSecretEncrypted! })),
      async (id, before, after) =>
        (await prisma.user.updateMany({ where: { id, totpSecretEncrypted: before }, data: { totpSecretEncrypted: after } })).count === 1,
    ),
  };
}

async function resealRows(
  secretBox: SecretBox,
  kind: SecretOwner['kind'],
  rows: { id: string; secretEncrypted: string }[],
  write: (id: string, before: string, after: string) => Promise<boolean>,
): Promise<ResealCounts> {
  const counts: ResealCounts = { resealed: 0, unchanged: 0, unopenable: [] };
  for (const row of rows) {
    if (secretBox.isCurrent(row.secretEncrypted)) {
      counts.unchanged += 1;
      continue;
    }
    const owner = { kind, id: row.id };
    const resealed = resealOne(secretBox, row.secretEncrypted, owner);
    if (resealed === undefined) counts.unopenable.push(row.id);
    else if (await write(row.id, row.secretEncrypted, resealed)) counts.resealed += 1;
  }
  return counts;
}

async function resealWebhookEndpoints(prisma: PrismaClient, secretBox: SecretBox): Promise<ResealCounts> {
  const counts: ResealCounts = { resealed: 0, unchanged: 0, unopenable: [] };
  const rows = await prisma.webhookEndpoint.findMany({ select: { id: true, secretEncrypted: true, previousSecrets: true }, orderBy: { id: 'asc' } });
  for (const row of rows) {
    const replaced = ReplacedSecrets.parse(row.previousSecrets);
    if ([row.secretEncrypted, ...replaced.map((r) => r.secret_encrypted)].every((sealed) => secretBox.isCurrent(sealed))) {
      counts.unchanged += 1;
      continue;
    }
    const owner: SecretOwner = { kind: 'webhook_endpoint', id: row.id };
    const current = resealOne(secretBox, row.secretEncrypted, owner);
    const previous = replaced.map((r) => ({ ...r, secret_encrypted: resealOne(secretBox, r.secret_encrypted, owner) }));
    if (current === undefined || previous.some((r) => r.secret_encrypted === undefined)) {
      counts.unopenable.push(row.id);
      continue;
    }
    const written = await prisma.$executeRaw`
      UPDATE webhook_endpoints SET secret_encrypted = ${current}, previous_secrets = ${JSON.stringify(previous)}::jsonb
      WHERE id = ${row.id} AND secret_encrypted = ${row.secretEncrypted} AND previous_secrets = ${JSON.stringify(row.previousSecrets)}::jsonb`;
    if (written === 1) counts.resealed += 1;
  }
  return counts;
}

/** The secret sealed anew for its row, or undefined when it does not open for that row. */
function resealOne(secretBox: SecretBox, sealed: string, owner: SecretOwner): string | undefined {
  if (secretBox.isCurrent(sealed)) return sealed;
  try {
    return secretBox.seal(secretBox.open(sealed, owner), owner);
  } catch (error) {
    if (error instanceof SecretNotOpened) return undefined;
    throw error;
  }
}
