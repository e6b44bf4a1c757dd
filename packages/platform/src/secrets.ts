import { createCipheriv, createDecipheriv, createHash, hash, hkdfSync, randomBytes } from 'node:crypto';

/** The kinds of rows that hold a sealed secret; each has a key of its own. */
export const SEALED_SECRET_KINDS = ['webhook_endpoint', 'bank_adapter', 'user_totp', 'console_display'] as const;
export type SealedSecretKind = (typeof SEALED_SECRET_KINDS)[number];

/** The row a sealed secret belongs to: it opens only there. */
export interface SecretOwner {
  kind: SealedSecretKind;
  id: string;
}

/** A sealed secret that does not open for its row: another row's, tampered with, or under a key not configured. */
export class SecretNotOpened extends Error {
  override name = 'SecretNotOpened';
}

const MIN_KEY_LENGTH = 16;
const HKDF_SALT = 'pmatch secret box';

/** One SECRETS_KEY: a key per kind derived with HKDF, its public id, and the v1 key (SHA-256 of it). */
class RingKey {
  readonly id: string;
  readonly legacy: Buffer;
  private readonly perKind: ReadonlyMap<SealedSecretKind, Buffer>;

  constructor(secretsKey: string) {
    const derive = (info: string, length: number) => Buffer.from(hkdfSync('sha256', secretsKey, HKDF_SALT, info, length));
    this.id = derive('key id', 6).toString('base64url');
    this.perKind = new Map(SEALED_SECRET_KINDS.map((kind) => [kind, derive(`seal ${kind}`, 32)]));
    this.legacy = createHash('sha256').update(secretsKey).digest();
  }

  forKind(kind: SealedSecretKind): Buffer {
    return this.perKind.get(kind)!;
  }
}

/**
 * Secrets at rest (webhook signing secrets, adapter secrets, console TOTP secrets) sealed with
 * AES-256-GCM under a key derived with HKDF from SECRETS_KEY per kind of row, with the kind and
 * the row's id as associated data: `v2.<key id>.<iv>.<tag>.<ciphertext>` (base64url). A secret
 * copied into another row does not open there. SECRETS_KEYS_OLD still open what they sealed;
 * `v1.` secrets (no row binding) open until resealed. docs/decisions/0067-sealed-secrets-bound-to-their-row.md
 */
export class SecretBox {
  private readonly ring: readonly RingKey[];

  /** `secretsKey` seals; `olderKeys` (SECRETS_KEYS_OLD) only open. */
  constructor(secretsKey: string, olderKeys: readonly string[] = []) {
    for (const key of [secretsKey, ...olderKeys]) {
      if (key.length < MIN_KEY_LENGTH) throw new Error(`SECRETS_KEY and SECRETS_KEYS_OLD must be at least ${MIN_KEY_LENGTH} characters each`);
    }
    this.ring = [secretsKey, ...olderKeys].map((key) => new RingKey(key));
  }

  seal(plaintext: string, owner: SecretOwner): string {
    const key = this.ring[0]!;
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key.forKind(owner.kind), iv);
    cipher.setAAD(associatedData(owner));
    const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
    return ['v2', key.id, ...[iv, cipher.getAuthTag(), ciphertext].map((p) => p.toString('base64url'))].join('.');
  }

  /** The secret sealed for `owner`; SecretNotOpened (never carrying the secret) when it does not open there. */
  open(sealed: string, owner: SecretOwner): string {
    const parts = sealed.split('.');
    try {
      if (parts[0] === 'v2' && parts.length === 5) {
        const key = this.ring.find((k) => k.id === parts[1]);
        if (key === undefined) throw new SecretNotOpened('sealed under a key that is neither SECRETS_KEY nor one of SECRETS_KEYS_OLD');
        return decrypt(key.forKind(owner.kind), parts.slice(2), associatedData(owner));
      }
      if (parts[0] === 'v1' && parts.length === 4) {
        for (const key of this.ring) {
          try {
            return decrypt(key.legacy, parts.slice(1), undefined);
          } catch {
            // the next key of the ring
          }
        }
        throw new SecretNotOpened('sealed (v1) under a key that is neither SECRETS_KEY nor one of SECRETS_KEYS_OLD');
      }
    } catch (error) {
      if (error instanceof SecretNotOpened) throw error;
      throw new SecretNotOpened(`does not open for ${owner.kind} ${owner.id}: another row's secret, or altered`);
    }
    throw new SecretNotOpened('not a sealed secret');
  }

  /** Whether `sealed` is in the current form under SECRETS_KEY (a reseal would change nothing). */
  isCurrent(sealed: string): boolean {
    return sealed.startsWith(`v2.${this.ring[0]!.id}.`);
  }
}

function associatedData(owner: SecretOwner): Buffer {
  return Buffer.from(`pmatch sealed secret\n${owner.kind}\n${owner.id}`, 'utf8');
}

function decrypt(key: Buffer, [iv, tag, ciphertext]: string[], aad: Buffer | undefined): string {
  if (iv === undefined || tag === undefined || ciphertext === undefined) throw new SecretNotOpened('not a sealed secret');
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'), { authTagLength: 16 });
  if (aad !== undefined) decipher.setAAD(aad);
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(ciphertext, 'base64url')), decipher.final()]).toString('utf8');
}

/** A Standard Webhooks secret: `whsec_` and base64 of 32 random bytes. */
export function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** One-shot hashing: every API request hashes its key, and `crypto.hash` costs a third of a Hash object's round trip. */
export function sha256Hex(text: string): string {
  return hash('sha256', text, 'hex');
}
