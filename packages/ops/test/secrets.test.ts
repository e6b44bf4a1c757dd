import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import { newId } from '@pmatch/contracts';
import { type PrismaClient } from '@pmatch/db';
import { SecretBox, newSigningSecret } from '@pmatch/platform';
import { DATABASE_ROLE, databaseUrlAs, usePrismaTestDatabase, type TestDatabase } from '@pmatch/testkit';
import * as commands from '../src/commands';
import { runOpsOk } from './run-ops';

/** `ops secrets reseal` (key rotation) on the real database, run as the operator's own role. */

const OLD_KEY = 'the-secrets-key-before-rotation';
const NEW_KEY = 'the-secrets-key-after-rotation';

let db: TestDatabase;
let prisma: PrismaClient;

usePrismaTestDatabase({ poolSize: 2 }, (opened) => ({ db, prisma } = opened));

/** A secret sealed as before secrets were bound to their row (v1: SHA-256 of the key, no associated data). */
function sealV1(key: string, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', createHash('sha256').update(key).digest(), iv);
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return ['v1', iv, cipher.getAuthTag(), ciphertext].map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join('.');
}

test('when secrets are resealed under a new SECRETS_KEY, then every webhook, adapter and TOTP secret opens with the new key alone, a second run changes nothing, and a copied secret is reported, not resealed', async () => {
  const old = new SecretBox(OLD_KEY);
  const organisationId = (await commands.createOrganisation(prisma, { name: 'Shop', ownerEmail: 'owner@example.com' })).id;
  const account = await commands.addLiveBankAccount(prisma, {
    organisationId,
    bankCode: '0009',
    branchCode: '100',
    accountType: 'ordinary',
    accountNumber: '1234567',
    holderName: 'ｼﾖﾂﾌﾟ',
  });
  const opsAs = (key: string, args: string[], env: Record<string, string> = {}) =>
    runOpsOk(databaseUrlAs(db.url, DATABASE_ROLE.ops), args, { SECRETS_KEY: key, ...env });
  const adapter = await opsAs(OLD_KEY, ['adapter', 'create', '--name', 'gateway', '--bank-account', account.id]);
  const endpoint = async (sealed: (id: string, secret: string) => string, replaced: string[] = []) => {
    const id = newId('webhookEndpoint');
    const secret = newSigningSecret();
    await prisma.webhookEndpoint.create({
      data: {
        id,
        organisationId,
        mode: 'live',
        url: 'https://shop.example/hooks',
        secretEncrypted: sealed(id, secret),
        previousSecrets: replaced.map((r) => ({ secret_encrypted: old.seal(r, { kind: 'webhook_endpoint', id }), expires_at: '2026-11-30T00:00:00.000Z' })),
      },
    });
    return { id, secret, replaced };
  };
  const bound = await endpoint((id, secret) => old.seal(secret, { kind: 'webhook_endpoint', id }), [newSigningSecret()]);
  const legacy = await endpoint((_id, secret) => sealV1(OLD_KEY, secret));
  const adapterRow = await prisma.bankAdapter.findUniqueOrThrow({ where: { id: String(adapter.id) } });
  const copied = await endpoint(() => adapterRow.secretEncrypted);
  const userId = newId('user');
  await prisma.user.create({
    data: {
      id: userId,
      organisationId,
      email: 'clerk@shop.example',
      role: 'admin',
      totpSecretEncrypted: old.seal('JBSWY3DPEHPK3PXP', { kind: 'user_totp', id: userId }),
    },
  });

  const first = await opsAs(NEW_KEY, ['secrets', 'reseal'], { SECRETS_KEYS_OLD: OLD_KEY });
  const second = await opsAs(NEW_KEY, ['secrets', 'reseal'], { SECRETS_KEYS_OLD: OLD_KEY });

  expect(first).toEqual({
    webhook_endpoints: { resealed: 2, unchanged: 0, unopenable: [copied.id] },
    bank_adapters: { resealed: 1, unchanged: 0, unopenable: [] },
    users: { resealed: 1, unchanged: 0, unopenable: [] },
  });
  expect(second).toEqual({
    webhook_endpoints: { resealed: 0, unchanged: 2, unopenable: [copied.id] },
    bank_adapters: { resealed: 0, unchanged: 1, unopenable: [] },
    users: { resealed: 0, unchanged: 1, unopenable: [] },
  });
  const newOnly = new SecretBox(NEW_KEY);
  for (const e of [bound, legacy]) {
    const row = await prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: e.id } });
    const previous = (row.previousSecrets as { secret_encrypted: string }[]).map((p) =>
      newOnly.open(p.secret_encrypted, { kind: 'webhook_endpoint', id: e.id }),
    );
    expect({ secret: newOnly.open(row.secretEncrypted, { kind: 'webhook_endpoint', id: e.id }), previous }).toEqual({ secret: e.secret, previous: e.replaced });
  }
  const resealedAdapter = await prisma.bankAdapter.findUniqueOrThrow({ where: { id: adapterRow.id } });
  expect(newOnly.open(resealedAdapter.secretEncrypted, { kind: 'bank_adapter', id: adapterRow.id })).toBe(adapter.secret);
  const user = await prisma.user.findUniqueOrThrow({ where: { id: userId } });
  expect(newOnly.open(user.totpSecretEncrypted!, { kind: 'user_totp', id: userId })).toBe('JBSWY3DPEHPK3PXP');
  expect((await prisma.webhookEndpoint.findUniqueOrThrow({ where: { id: copied.id } })).secretEncrypted).toBe(adapterRow.secretEncrypted);
});
